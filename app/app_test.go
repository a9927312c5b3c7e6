package app

import (
	"context"
	"testing"
)

func TestVersion(t *testing.T) {
	if got := New("1.2.3").Version(); got != "1.2.3" {
		t.Fatalf("Version() = %q, want %q", got, "1.2.3")
	}
}

func TestOnStartupKeepsContext(t *testing.T) {
	a := New("test")
	ctx := context.WithValue(context.Background(), struct{}{}, "wails")
	OnStartup(a)(ctx)
	if a.wailsContext() != ctx {
		t.Fatal("startup did not keep the context")
	}
}

func TestFocusBeforeStartupIsSafe(t *testing.T) {
	Focus(New("test"))
}
