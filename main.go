// Command shepherd is the Shepherd desktop app. With arguments it is the
// command line (`shepherd serve`, `shepherd ls`, …); without, it opens the
// window.
package main

import (
	"embed"
	"fmt"
	"os"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"

	"shepherd/app"
	"shepherd/backend/cli"
)

//go:embed all:frontend/dist
var assets embed.FS

func main() {
	if len(os.Args) > 1 {
		os.Exit(cli.Run(os.Args[1:]))
	}

	// One version for the window and the engine: set it with
	// -ldflags "-X shepherd/backend/cli.Version=…".
	a := app.New(cli.Version)
	err := wails.Run(&options.App{
		Title:     "Shepherd",
		Width:     1100,
		Height:    720,
		MinWidth:  640,
		MinHeight: 400,
		AssetServer: &assetserver.Options{
			Assets: assets,
		},
		BackgroundColour: &options.RGBA{R: 27, G: 38, B: 54, A: 1},
		OnStartup:        app.OnStartup(a),
		OnShutdown:       app.OnShutdown(a),
		// A second launch hands over to the first window instead of starting
		// a second engine on the same data.
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
