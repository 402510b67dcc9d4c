package runner

import (
	"fmt"
	"reflect"
)

// A reload (Update) changes what the next turn of every agent runs with: the fields
// NextTurnFields names. The rest of a Config — where claude works, what its sandbox shows,
// whose settings and login it uses, the user it runs as, how many processes are kept — is
// fixed when the Runner starts (the sandbox was probed for it, run_as directories were
// prepared for it); a change to those needs a new Runner.
//
// The current profiles live in Runner.live, replaced whole by Update and read without a
// lock by profile. A warm process remembers the profile it was started with (proc.cfg): a
// turn whose agent's profile has been replaced since gets a new process, which resumes the
// conversation (pool.go, acquire) — so a new model or system prompt reaches warm and new
// processes alike at their next turn, and a turn already running finishes with what it
// started with.

// NextTurnFields are the Config fields Update applies from the next turn on.
var NextTurnFields = []string{
	"Args", "Env", "Model", "FallbackModel", "PermissionMode", "PermissionModes",
	"AllowedTools", "DisallowedTools", "SystemPrompt", "SystemPromptFile", "Timeout", "MaxTurns",
	"IdleTimeout", "Spare",
}

// liveProfiles is the runner's own configuration and its named agents'.
type liveProfiles struct {
	main   *Config
	agents map[string]*Config
}

// current is the profiles turns start with now.
func (r *Runner) current() *liveProfiles {
	if p := r.live.Load(); p != nil {
		return p
	}
	return &liveProfiles{main: &r.cfg, agents: r.agents}
}

// Update applies next's NextTurnFields, for the runner's own agent and for each named
// agent next also has, to every turn that starts after it returns (a warm process started
// with other settings is replaced at its chat's next turn; a running turn is not touched).
// Fields outside NextTurnFields are ignored: the caller reports them as needing a restart.
// An agent whose next-turn settings did not change keeps its profile, so its warm
// processes stay. It returns an error, and changes nothing, when next does not validate.
func (r *Runner) Update(next Config) error {
	next = next.withDefaults()
	if err := next.Validate(); err != nil {
		return fmt.Errorf("runner config: %w", err)
	}
	nextAgents, err := next.agentProfiles()
	if err != nil {
		return err
	}
	r.updateMu.Lock()
	defer r.updateMu.Unlock()
	cur := r.current()
	upd := &liveProfiles{main: withNextTurn(cur.main, &next), agents: make(map[string]*Config, len(cur.agents))}
	for id, p := range cur.agents {
		if n, ok := nextAgents[id]; ok {
			upd.agents[id] = withNextTurn(p, n)
		} else {
			upd.agents[id] = p
		}
	}
	r.live.Store(upd)
	r.dropStaleSpares()
	return nil
}

// withNextTurn is cur with next's NextTurnFields; cur itself when none of them differ.
func withNextTurn(cur, next *Config) *Config {
	c := *cur
	cv, nv := reflect.ValueOf(&c).Elem(), reflect.ValueOf(next).Elem()
	for _, f := range NextTurnFields {
		cv.FieldByName(f).Set(nv.FieldByName(f))
	}
	if reflect.DeepEqual(&c, cur) {
		return cur
	}
	return &c
}
