package app

import (
	"context"
	"strings"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/logfollow"
)

// The window shows one machine's engine at a time: this computer's, or a
// host's through it (SPEC "Hosts"). UseHost chooses; every call, log and
// the agent form then go to that host's engine, except the hosts' own
// operations, which are always this computer's.

// localOps are the operations about the hosts themselves.
var localOps = map[string]bool{
	api.ListHosts.Info().ID: true, api.GetHost.Info().ID: true, api.AddHost.Info().ID: true, api.RemoveHost.Info().ID: true,
}

// UseHost makes the window show host's engine ("": this computer's).
func (a *App) UseHost(host string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.machine == host {
		return
	}
	a.machine = host
	for k, cancel := range a.hostLogs { // the logs the other machine's view followed
		cancel()
		delete(a.hostLogs, k)
	}
}

// hostClient is the client of the machine the window shows.
func (a *App) hostClient() (*api.Client, string, error) {
	c, err := a.client()
	if err != nil {
		return nil, "", err
	}
	a.mu.Lock()
	host := a.machine
	a.mu.Unlock()
	if host != "" {
		c = c.OnHost(host)
	}
	return c, host, nil
}

// callClient is the client of one call: the machine given (host, when
// explicit: "" is this computer), else the one shown; the hosts' own
// operations always this computer's.
func (a *App) callClient(operationID, host string, explicit bool) (*api.Client, error) {
	if localOps[operationID] {
		return a.client()
	}
	if !explicit {
		c, _, err := a.hostClient()
		return c, err
	}
	c, err := a.client()
	if err != nil || host == "" {
		return c, err
	}
	return c.OnHost(host), nil
}

// hostTail is the tail of a host's agent's log, over the API.
func hostTail(c *api.Client, projectID, agentID string, n int) (logfollow.Chunk, error) {
	out, err := api.Call(context.Background(), c, api.GetLog, api.LogIn{Project: projectID, Agent: agentID, Tail: n})
	if err != nil {
		return logfollow.Chunk{}, err
	}
	return logfollow.Chunk{Lines: splitLines(string(out.Body)), Offset: out.Offset}, nil
}

// splitLines cuts a log's text into its lines (the last one complete).
func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return []string{}
	}
	return strings.Split(s, "\n")
}

// hostLogPoll is how often a host's agent's log is asked for what is new.
const hostLogPoll = 500 * time.Millisecond

// followHost pushes what is appended to a host's agent's log past offset
// as agent:log batches, asking its engine every hostLogPoll, until
// unfollowed (or the window shows another machine).
func (s *LogService) followHost(c *api.Client, projectID, agentID string, offset int64) {
	key := c.Host + "/" + projectID + "/" + agentID
	ctx, cancel := context.WithCancel(context.Background())
	s.a.mu.Lock()
	if s.a.hostLogs == nil {
		s.a.hostLogs = map[string]context.CancelFunc{}
	}
	if old := s.a.hostLogs[key]; old != nil {
		old()
	}
	s.a.hostLogs[key] = cancel
	s.a.mu.Unlock()
	go func() {
		var partial string // a line not ended yet
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(hostLogPoll):
			}
			out, err := api.Call(ctx, c, api.GetLog, api.LogIn{Project: projectID, Agent: agentID, Since: api.Opt[int64]{Value: offset, Set: true}})
			if err != nil || out.Offset == offset && len(out.Body) == 0 {
				continue
			}
			reset := out.Offset < offset
			offset = out.Offset
			text := partial + string(out.Body)
			i := strings.LastIndexByte(text, '\n')
			if i < 0 {
				partial = text
				continue
			}
			partial = text[i+1:]
			lines := strings.Split(text[:i], "\n")
			s.a.emit(EventAgentLog, logfollow.Batch{ProjectID: projectID, AgentID: agentID, Lines: lines,
				Offset: offset - int64(len(partial)), Reset: reset})
		}
	}()
}

// unfollowHost stops following a host's agent's log.
func (s *LogService) unfollowHost(host, projectID, agentID string) {
	key := host + "/" + projectID + "/" + agentID
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	if cancel := s.a.hostLogs[key]; cancel != nil {
		cancel()
		delete(s.a.hostLogs, key)
	}
}
