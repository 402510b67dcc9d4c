package pluginclient

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/clawhost/clawhost/sdk/internal/wire"
)

// Launch says how to reach one plugin: the process to start (Cmd, or
// Runner for a host that execs it itself) or the one to attach to
// (Reattach).
type Launch struct {
	// Cmd is the plugin's command when the launcher starts it as is.
	Cmd *exec.Cmd
	// Runner, instead of Cmd, makes the process from go-plugin's template
	// command (its handshake environment) and the directory of its socket:
	// the host's policy (environment, process group, parent-death signal)
	// lives there.
	Runner func(l hclog.Logger, tmpl *exec.Cmd, socketDir string) (runner.Runner, error)
	// Reattach attaches to a plugin already serving (one started by hand
	// in debug mode, or served in-process by a test harness).
	Reattach *plugin.ReattachConfig
	// Secret is the secret the plugin named by Reattach serves with (see
	// Reattach.Secret); empty for one that serves without. A plugin
	// NewClient starts (Cmd or Runner) always gets a new secret instead.
	Secret string
	// Logger gets go-plugin's own lines and the plugin's log lines (without
	// the fields go-plugin repeats, see pluginLines); StartTimeout bounds the
	// handshake (go-plugin's default when zero); Stderr gets the plugin's
	// stderr lines that are not log lines.
	Logger       hclog.Logger
	StartTimeout time.Duration
	Stderr       io.Writer
	// SocketDir and SocketGroup place the plugin's unix socket (go-plugin's
	// default temporary directory when empty).
	SocketDir, SocketGroup string
	// KeepHostEnv passes the host's whole environment to a Cmd; by default
	// the plugin sees only what Cmd.Env (or Runner) gives it.
	KeepHostEnv bool
}

// EnvSecret is the environment variable in which NewClient hands a plugin
// it starts the secret made for that launch (64 hex digits), which the
// plugin then requires on every call (proto/PROTOCOL.md,
// "Authentication"). The host never logs it.
const EnvSecret = wire.EnvSecret

// NewClient is the one place a clawhost host makes go-plugin's client of a
// plugin: clawhost's handshake and plugin set, gRPC only, the dial options
// of DialOptions. Its Client finishes the handshake; Dispense then gives
// the host's client of the plugin.
//
// A plugin it starts gets a new secret in its environment (EnvSecret), and
// the connection authenticates every call with it and grants each media
// path of a Send, unary or on the call stream, for that send
// (proto/PROTOCOL.md, "Authentication"); so does the connection to an
// attached plugin whose Launch.Secret is set.
func NewClient(l Launch) *plugin.Client {
	secret := l.Secret
	if l.Reattach == nil {
		secret = wire.NewSecret()
	}
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		Plugins:          PluginSet(),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  DialOptions(),
		Logger:           l.Logger,
		StartTimeout:     l.StartTimeout,
		Stderr:           l.Stderr,
		Cmd:              l.Cmd,
		Reattach:         l.Reattach,
		SkipHostEnv:      !l.KeepHostEnv,
	}
	if secret != "" {
		cfg.GRPCDialOptions = append(cfg.GRPCDialOptions,
			grpc.WithPerRPCCredentials(wire.Credentials{Secret: secret}),
			grpc.WithChainUnaryInterceptor(wire.SignUnary(secret)),
			grpc.WithChainStreamInterceptor(wire.SignStream(secret)))
	}
	if l.Logger != nil {
		cfg.Logger = pluginLines{l.Logger}
	}
	secretVar := wire.EnvSecret + "=" + secret
	if l.Cmd != nil {
		// After the host's environment (which go-plugin would append
		// after Cmd.Env), so that no inherited value replaces it.
		env := slices.Clone(l.Cmd.Env)
		if l.KeepHostEnv {
			env = append(env, os.Environ()...)
			cfg.SkipHostEnv = true
		}
		l.Cmd.Env = append(env, secretVar)
	}
	if l.Runner != nil {
		cfg.RunnerFunc = func(lg hclog.Logger, tmpl *exec.Cmd, socketDir string) (runner.Runner, error) {
			// The runner's environment policy takes the template's
			// variables as the host's own (core/pluginhost/env.go).
			tmpl.Env = append(tmpl.Env, secretVar)
			return l.Runner(lg, tmpl, socketDir)
		}
	}
	if l.SocketDir != "" || l.SocketGroup != "" {
		cfg.UnixSocketConfig = &plugin.UnixSocketConfig{TempDir: l.SocketDir, Group: l.SocketGroup}
	}
	return plugin.NewClient(cfg)
}

// Dispense returns the host's client of the plugin behind rpc.
func Dispense(rpc plugin.ClientProtocol) (*Plugin, error) {
	raw, err := rpc.Dispense(PluginName)
	if err != nil {
		return nil, err
	}
	conn, ok := raw.(*grpc.ClientConn)
	if !ok {
		return nil, fmt.Errorf("unexpected client type %T", raw)
	}
	return Wrap(conn), nil
}
