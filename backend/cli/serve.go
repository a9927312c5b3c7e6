package cli

import (
	"context"

	"shepherd/backend/engine"
)

// The engine's setup is package engine's; `shepherd serve` runs it. The
// names below are kept for the callers that still spell them through the
// CLI (benches, tests of other packages); new code uses package engine.

// Environment variables that override where the shim and the headless
// engine are (engine.ShimEnv, engine.EngineEnv).
const (
	ShimEnv   = engine.ShimEnv
	EngineEnv = engine.EngineEnv
)

// EventEngineQuit is engine.EventEngineQuit.
const EventEngineQuit = engine.EventEngineQuit

// ServeOptions is engine.Options.
type ServeOptions = engine.Options

// Host is engine.Host.
type Host = engine.Host

// Start is engine.Start with this CLI's version.
func Start(ctx context.Context, opts ServeOptions) (*Host, error) {
	return engine.Start(ctx, withVersion(opts))
}

// Serve is engine.Serve with this CLI's version.
func Serve(ctx context.Context, opts ServeOptions) error {
	return engine.Serve(ctx, withVersion(opts))
}

func withVersion(opts ServeOptions) ServeOptions {
	if opts.Version == "" {
		opts.Version = Version
	}
	return opts
}

// DefaultShimPath is engine.DefaultShimPath.
func DefaultShimPath() string { return engine.DefaultShimPath() }

// DefaultEnginePath is engine.DefaultEnginePath.
func DefaultEnginePath() string { return engine.DefaultEnginePath() }
