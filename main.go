// Command shepherd is the Shepherd desktop app. With arguments it is the
// command line (`shepherd ls`, …; `shepherd serve` runs the headless
// engine, shepherd-engine, beside it); without (or with --hidden), it opens
// the window, a client of that engine.
package main

import (
	"embed"
	"fmt"
	"os"
	"syscall"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/menu"
	"github.com/wailsapp/wails/v2/pkg/menu/keys"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"

	"shepherd/app"
	"shepherd/backend/cli"
)

//go:embed all:frontend/dist
var assets embed.FS

func main() {
	hidden := len(os.Args) == 2 && os.Args[1] == "--hidden"
	if len(os.Args) > 1 && !hidden {
		if os.Args[1] == "serve" {
			execEngine()
		}
		os.Exit(cli.Run(os.Args[1:]))
	}
	checkDisplay()
	app.PrepareSessionBus()
	app.PrepareWebView()

	// One version for the window and the engine: set it with
	// -ldflags "-X shepherd/backend/cli.Version=…".
	a := app.New(cli.Version)
	// Quit always quits: SIGINT, SIGTERM and SIGHUP quit as the menu does.
	app.HandleSignals(a)
	err := wails.Run(&options.App{
		Title:       "Shepherd",
		Width:       1280,
		Height:      800,
		MinWidth:    900,
		MinHeight:   560,
		StartHidden: hidden,
		AssetServer: &assetserver.Options{
			Assets: assets,
		},
		Menu:             appMenu(a),
		BackgroundColour: &options.RGBA{R: 27, G: 38, B: 54, A: 1},
		OnStartup:        app.OnStartup(a),
		// Closing the window hides it; the engine keeps supervising until
		// the user quits from the menu (or `shepherd quit`).
		OnBeforeClose: app.OnBeforeClose(a),
		OnShutdown:    app.OnShutdown(a),
		// A second launch shows this window instead of starting a second
		// engine on the same data.
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId:               "dev.shepherd.app",
			OnSecondInstanceLaunch: func(options.SecondInstanceData) { app.Focus(a) },
		},
		Bind: app.Bind(a),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "shepherd:", err)
		os.Exit(1)
	}
}

// appMenu has Quit Shepherd (Ctrl/Cmd+Q): closing the window only hides it.
func appMenu(a *app.App) *menu.Menu {
	m := menu.NewMenu()
	sub := m.AddSubmenu("Shepherd")
	sub.AddText("Show Window", nil, func(*menu.CallbackData) { a.Show() })
	sub.AddSeparator()
	sub.AddText("Quit Shepherd", keys.CmdOrCtrl("q"), func(*menu.CallbackData) { a.Quit() })
	m.Append(menu.EditMenu())
	return m
}

// execEngine replaces this process with the headless engine binary
// (shepherd-engine, built without cgo) for `serve`, so that a daemon does not
// carry GTK and WebKit. Without one it returns, and this binary serves.
func execEngine() {
	bin := cli.DefaultEnginePath()
	fi, err := os.Stat(bin)
	if err != nil || fi.IsDir() {
		return
	}
	if self, err := os.Executable(); err == nil {
		if sf, err := os.Stat(self); err == nil && os.SameFile(fi, sf) {
			return
		}
	}
	err = syscall.Exec(bin, append([]string{bin}, os.Args[1:]...), os.Environ())
	fmt.Fprintf(os.Stderr, "shepherd: run the engine %s: %v; serving from this binary\n", bin, err)
}
