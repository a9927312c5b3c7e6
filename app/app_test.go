package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wailsapp/wails/v2/pkg/menu"
	"github.com/wailsapp/wails/v2/pkg/options"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"shepherd/backend/supervisor"
	"shepherd/internal/testutil"
)

func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, v := range []string{"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"} {
		t.Setenv(v, filepath.Join(dir, strings.ToLower(v)))
	}
	return dir
}

func TestVersion(t *testing.T) {
	if got := New("1.2.3").Version(); got != "1.2.3" {
		t.Fatalf("Version() = %q, want %q", got, "1.2.3")
	}
}

// The window embeds the same engine and API as `shepherd serve`: start-up
// starts it and writes engine.json. A second window on the same data folder
// attaches to that engine through its API and events instead of failing;
// when the engine goes away it says so, and can start one of its own.
func TestStartupEmbedsOrAttaches(t *testing.T) {
	dir := isolate(t)
	needShim(t)
	a := New("test")
	a.emitFn = (&emitted{}).emit
	ctx := context.WithValue(context.Background(), struct{}{}, "wails")
	OnStartup(a)(ctx)
	if a.wailsContext() != ctx {
		t.Fatal("startup did not keep the context")
	}
	st, err := a.Engine()
	if err != nil || st.State != EngineEmbedded || !strings.HasPrefix(st.URL, "http://127.0.0.1:") || st.PID != os.Getpid() {
		t.Fatalf("Engine() = %+v, %v", st, err)
	}
	engineFile := filepath.Join(dir, "xdg_runtime_dir", "shepherd", "engine.json")
	if _, err := os.Stat(engineFile); err != nil {
		t.Fatalf("engine.json: %v", err)
	}
	p := addProject(t, a, t.TempDir(), "shared")

	// A second window attaches to the first one's engine.
	b := New("test")
	brec := &emitted{}
	b.emitFn = brec.emit
	OnStartup(b)(ctx)
	bst, err := b.Engine()
	if err != nil || bst.State != EngineAttached || bst.URL != st.URL {
		t.Fatalf("second window: %+v, %v", bst, err)
	}
	var list []supervisor.ProjectView
	if err := call(b, "listProjects", nil, nil, &list); err != nil || len(list) != 1 || list[0].ID != p.ID {
		t.Fatalf("projects through the attached engine: %+v %v", list, err)
	}
	if err := call(b, "createAgent", map[string]any{"project": p.ID}, supervisor.AgentSpec{ID: "x", Command: "sh", Args: []string{"-c", "exec sleep 30"}, GraceSec: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := call(b, "startAgent", agentParams(p.ID, "x"), nil, nil); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the attached window got the engine's events", func() bool { return brec.count("agent:state") >= 2 })
	if err := call(a, "getAgent", agentParams(p.ID, "x"), nil, nil); err != nil {
		t.Fatalf("the first window does not see the agent: %v", err)
	}
	err = call(b, "startAgent", agentParams(p.ID, "x"), nil, nil)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Name != supervisor.ErrAlreadyRunning.Error() || ce.Status != 409 {
		t.Fatalf("an engine error through the API: %v", err)
	}
	if err := call(b, "stopAgent", agentParams(p.ID, "x"), map[string]int{"graceSec": 1}, nil); err != nil {
		t.Fatal(err)
	}

	// The engine goes away: the attached window says so, then starts its own.
	OnShutdown(a)(ctx)
	if _, err := os.Stat(engineFile); !os.IsNotExist(err) {
		t.Fatalf("engine.json left after shutdown: %v", err)
	}
	testutil.Eventually(t, "the attached window noticed", func() bool { s, _ := b.Engine(); return s.State == EngineLost })
	if err := call(b, "listProjects", nil, nil, nil); err == nil {
		t.Fatal("a lost engine still answers")
	}
	if st, err := b.StartEngine(); err != nil || st.State != EngineEmbedded {
		t.Fatalf("StartEngine: %+v %v", st, err)
	}
	if err := call(b, "listProjects", nil, nil, &list); err != nil || len(list) != 1 {
		t.Fatalf("projects in the new engine: %+v, %v", list, err)
	}
	OnShutdown(b)(ctx)
	if _, err := a.Engine(); err == nil {
		t.Fatal("Engine() after shutdown reports a running engine")
	}
}

// A second launch hands over to this one with Focus, which may come before
// startup: then there is no window yet, and Focus must not call the Wails
// runtime, which ends the process (log.Fatal) on a nil context. The call is
// made in a child process so that such an end is this test's failure, not
// the whole package's. After startup, Focus brings the window up.
func TestFocusBeforeStartupIsSafe(t *testing.T) {
	if os.Getenv("SHEPHERD_TEST_FOCUS_CHILD") == "1" {
		Focus(New("test"))
		fmt.Println("Focus returned")
		return
	}
	child := exec.Command(os.Args[0], "-test.run=^TestFocusBeforeStartupIsSafe$", "-test.count=1")
	child.Env = append(os.Environ(), "SHEPHERD_TEST_FOCUS_CHILD=1")
	out, err := child.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Focus returned") {
		t.Fatalf("Focus before startup: %v\n%s", err, out)
	}

	a := New("test")
	win := &window{}
	a.mu.Lock()
	a.ctx = context.WithValue(context.Background(), "frontend", win) // the key the runtime reads
	a.mu.Unlock()
	Focus(a)
	if want := []string{"WindowUnminimise", "WindowShow"}; !slices.Equal(win.calls, want) {
		t.Fatalf("Focus after startup called %v, want %v", win.calls, want)
	}
}

// The Claude preset's checkbox gives the agent Shepherd's MCP server: a
// --mcp-config value naming this executable and `mcp`.
func TestMCPConfig(t *testing.T) {
	s, err := New("test").MCPConfig()
	if err != nil || !strings.Contains(s, `"shepherd":{"type":"stdio","command":"/`) || !strings.Contains(s, `"args":["mcp"]`) {
		t.Fatalf("%s %v", s, err)
	}
}

// window stands in for Wails' frontend (the window) in a context, where the
// runtime finds it: it records the calls that act on the window (the queries
// answer zero values).
type window struct{ calls []string }

func (w *window) call(name string) { w.calls = append(w.calls, name) }

func (w *window) Run(_ context.Context) (_ error)                                            { return }
func (w *window) RunMainLoop()                                                               { w.call("RunMainLoop") }
func (w *window) ExecJS(_ string)                                                            { w.call("ExecJS") }
func (w *window) Hide()                                                                      { w.call("Hide") }
func (w *window) Show()                                                                      { w.call("Show") }
func (w *window) Quit()                                                                      { w.call("Quit") }
func (w *window) OpenFileDialog(_ wruntime.OpenDialogOptions) (_ string, _ error)            { return }
func (w *window) OpenMultipleFilesDialog(_ wruntime.OpenDialogOptions) (_ []string, _ error) { return }
func (w *window) OpenDirectoryDialog(_ wruntime.OpenDialogOptions) (_ string, _ error)       { return }
func (w *window) SaveFileDialog(_ wruntime.SaveDialogOptions) (_ string, _ error)            { return }
func (w *window) MessageDialog(_ wruntime.MessageDialogOptions) (_ string, _ error)          { return }
func (w *window) WindowSetTitle(_ string)                                                    { w.call("WindowSetTitle") }
func (w *window) WindowShow()                                                                { w.call("WindowShow") }
func (w *window) WindowHide()                                                                { w.call("WindowHide") }
func (w *window) WindowCenter()                                                              { w.call("WindowCenter") }
func (w *window) WindowToggleMaximise()                                                      { w.call("WindowToggleMaximise") }
func (w *window) WindowMaximise()                                                            { w.call("WindowMaximise") }
func (w *window) WindowUnmaximise()                                                          { w.call("WindowUnmaximise") }
func (w *window) WindowMinimise()                                                            { w.call("WindowMinimise") }
func (w *window) WindowUnminimise()                                                          { w.call("WindowUnminimise") }
func (w *window) WindowSetAlwaysOnTop(_ bool)                                                { w.call("WindowSetAlwaysOnTop") }
func (w *window) WindowSetPosition(_ int, _ int)                                             { w.call("WindowSetPosition") }
func (w *window) WindowGetPosition() (_ int, _ int)                                          { return }
func (w *window) WindowSetSize(_ int, _ int)                                                 { w.call("WindowSetSize") }
func (w *window) WindowGetSize() (_ int, _ int)                                              { return }
func (w *window) WindowSetMinSize(_ int, _ int)                                              { w.call("WindowSetMinSize") }
func (w *window) WindowSetMaxSize(_ int, _ int)                                              { w.call("WindowSetMaxSize") }
func (w *window) WindowFullscreen()                                                          { w.call("WindowFullscreen") }
func (w *window) WindowUnfullscreen()                                                        { w.call("WindowUnfullscreen") }
func (w *window) WindowSetBackgroundColour(_ *options.RGBA)                                  { w.call("WindowSetBackgroundColour") }
func (w *window) WindowReload()                                                              { w.call("WindowReload") }
func (w *window) WindowReloadApp()                                                           { w.call("WindowReloadApp") }
func (w *window) WindowSetSystemDefaultTheme()                                               { w.call("WindowSetSystemDefaultTheme") }
func (w *window) WindowSetLightTheme()                                                       { w.call("WindowSetLightTheme") }
func (w *window) WindowSetDarkTheme()                                                        { w.call("WindowSetDarkTheme") }
func (w *window) WindowIsMaximised() (_ bool)                                                { return }
func (w *window) WindowIsMinimised() (_ bool)                                                { return }
func (w *window) WindowIsNormal() (_ bool)                                                   { return }
func (w *window) WindowIsFullscreen() (_ bool)                                               { return }
func (w *window) WindowClose()                                                               { w.call("WindowClose") }
func (w *window) WindowPrint()                                                               { w.call("WindowPrint") }
func (w *window) ScreenGetAll() (_ []wruntime.Screen, _ error)                               { return }
func (w *window) MenuSetApplicationMenu(_ *menu.Menu)                                        { w.call("MenuSetApplicationMenu") }
func (w *window) MenuUpdateApplicationMenu()                                                 { w.call("MenuUpdateApplicationMenu") }
func (w *window) Notify(_ string, _ ...interface{})                                          { w.call("Notify") }
func (w *window) BrowserOpenURL(_ string)                                                    { w.call("BrowserOpenURL") }
func (w *window) ClipboardGetText() (_ string, _ error)                                      { return }
func (w *window) ClipboardSetText(_ string) (_ error)                                        { return }
func (w *window) InitializeNotifications() (_ error)                                         { return }
func (w *window) CleanupNotifications()                                                      { w.call("CleanupNotifications") }
func (w *window) IsNotificationAvailable() (_ bool)                                          { return }
func (w *window) RequestNotificationAuthorization() (_ bool, _ error)                        { return }
func (w *window) CheckNotificationAuthorization() (_ bool, _ error)                          { return }
func (w *window) OnNotificationResponse(_ func(wruntime.NotificationResult)) {
	w.call("OnNotificationResponse")
}
func (w *window) SendNotification(_ wruntime.NotificationOptions) (_ error)              { return }
func (w *window) SendNotificationWithActions(_ wruntime.NotificationOptions) (_ error)   { return }
func (w *window) RegisterNotificationCategory(_ wruntime.NotificationCategory) (_ error) { return }
func (w *window) RemoveNotificationCategory(_ string) (_ error)                          { return }
func (w *window) RemoveAllPendingNotifications() (_ error)                               { return }
func (w *window) RemovePendingNotification(_ string) (_ error)                           { return }
func (w *window) RemoveAllDeliveredNotifications() (_ error)                             { return }
func (w *window) RemoveDeliveredNotification(_ string) (_ error)                         { return }
func (w *window) RemoveNotification(_ string) (_ error)                                  { return }
