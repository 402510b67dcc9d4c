package webchat

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"

	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// Probe is sdk.Plugin.Probe: the web chat has no platform to ask, so it
// says where the page will be (the listen address, and whether people on
// other machines can reach it) and where its access token comes from (the
// config block, the token kept in the data dir, or one made at the first
// start). It binds nothing and writes nothing; whether the address is free
// is what `clawhost doctor`'s port check tells.
func Probe(_ context.Context, cfg schema.Config) (probe.Report, error) {
	var rep probe.Report
	c, err := decodeConfig(cfg)
	if err != nil {
		return rep, err
	}
	https := c.TLSCert != "" && c.TLSKey != ""
	addr, _ := net.ResolveTCPAddr("tcp", c.Listen)
	if addr != nil {
		rep.Identity.Link = pageURL(addr, https)
	}
	rep.Identity.Name = c.Title
	if loopback, _ := isLoopbackListen(c.Listen); loopback {
		rep.Checks = append(rep.Checks, probe.Check{Name: "listen", Verdict: probe.OK, Found: "the page is served on " + c.Listen + ", this machine only"})
	} else {
		rep.Checks = append(rep.Checks, probe.Check{Name: "listen", Verdict: probe.OK, Found: "the page is served on " + c.Listen + ", reachable from other machines"})
	}
	token := probe.Check{Name: "access token", Verdict: probe.OK}
	switch {
	case c.AccessToken != "":
		token.Found = "set in the config block"
	case cfg.DataDir == "":
		token.Found = "none kept: one is made at each start"
	default:
		path := filepath.Join(cfg.DataDir, TokenFile)
		_, err := os.Stat(path)
		switch {
		case err == nil:
			token.Found = "kept in " + path
		case errors.Is(err, os.ErrNotExist):
			token.Found = "made at the first start and kept in " + path
		default:
			token.Verdict, token.Found, token.Do = probe.Fail, "cannot read "+path+": "+err.Error(), "run clawhost as the user that owns its data_dir"
		}
	}
	rep.Checks = append(rep.Checks, token)
	return rep, nil
}
