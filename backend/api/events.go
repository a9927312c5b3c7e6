package api

import (
	"shepherd/backend/logfollow"
	"shepherd/backend/notify"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// EventPayloads are the events of GET /v1/events (and the window's pushed
// events), by name: each field is one event's data. The description
// carries it as a schema, so that clients type the payloads from it.
type EventPayloads struct {
	AgentState        store.Record            `json:"agent:state" doc:"an agent's record after a transition"`
	AgentRemoved      supervisor.AgentRef     `json:"agent:removed" doc:"an agent was removed"`
	AgentLog          logfollow.Batch         `json:"agent:log" doc:"new lines of the followed agent's log"`
	AgentStats        supervisor.StatsBatch   `json:"agent:stats" doc:"CPU and memory samples of a watched project's agents"`
	AgentWorktree     supervisor.WorktreeView `json:"agent:worktree" doc:"a worktree agent's worktree was looked at again"`
	ProjectSynced     supervisor.SyncSummary  `json:"project:synced" doc:"what a project's load-time check found"`
	ProjectState      supervisor.ProjectView  `json:"project:state" doc:"a project was paused or resumed, or its budget held or let go"`
	Notify            notify.Notification     `json:"notify" doc:"a notification (a toast; a desktop one when native)"`
	EngineWhileClosed supervisor.WhileClosed  `json:"engine:while-closed" doc:"what the engine found at its start, once every project is loaded"`
	EngineAlerts      []supervisor.Alert      `json:"engine:alerts" doc:"the engine's own alerts changed (its data folder's disk)"`
	EngineQuit        EngineQuit              `json:"engine:quit" doc:"the engine was asked to quit: its windows close"`
	HostState         HostView                `json:"host:state" doc:"a host's state changed (connected, unreachable, …) or its agents' counts did"`
	HostEvent         HostEvent               `json:"host:event" doc:"an event of a host's engine, with the host's name and the event's id there"`
	HostAway          HostView                `json:"host:away" doc:"a host is back: what happened there while it was away (whileAway)"`
	HostRemoved       HostRemoved             `json:"host:removed" doc:"a host was removed"`
	Hello             Hello                   `json:"hello" doc:"the first event of a stream"`
	Reset             Dropped                 `json:"reset" doc:"events were missed: fetch the state again"`
	Dropped           Dropped                 `json:"dropped" doc:"the last event of a stream the client did not read in time, and why"`
}

// Hello is the first event of a stream: the id of the newest event.
type Hello struct {
	LastEventID uint64 `json:"lastEventId"`
}

// Dropped says why a stream ends (or why events were missed).
type Dropped struct {
	Reason string `json:"reason"`
}

// EngineQuit is the event that tells an engine's windows it quits.
type EngineQuit struct {
	PID int `json:"pid"`
}
