package core

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/attach"
	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/core/reports"
)

// What the operator is told as the host starts: the status page's link, a plugin's
// page, and the owner code of a host nobody owns yet.

// offerOwnerCode makes the first owner reachable where no `clawhost init` ran (a
// container, a hand-written file): when the host has no owner — none in access.owners,
// none claimed before — and no owner code is pending, it makes one (ownerclaim, valid
// ownerclaim.DefaultTTL, burned after ownerclaim.MaxAttempts wrong tries) and logs it
// once, so `docker logs` shows the one message that makes its sender the owner. The
// code is useless once claimed or expired; a restart while one is pending makes none
// (init's printed code stays valid), and `clawhost owner-code` makes a new one.
func (h *Host) offerOwnerCode() {
	if claimed, err := ownerclaim.Owners(h.cfg.DataDir); err != nil || len(claimed) > 0 || len(h.cfg.Access.Owners) > 0 {
		return
	}
	now := time.Now()
	if pending, err := ownerclaim.Pending(h.cfg.DataDir, now); err != nil || pending {
		if pending {
			h.log.Info("no owner yet; an owner code is pending (clawhost owner-code makes a new one)")
		}
		return
	}
	code, err := ownerclaim.Create(h.cfg.DataDir, ownerclaim.DefaultTTL, now)
	if err != nil {
		h.log.Warn("no owner yet, and no owner code could be made", "error", err)
		return
	}
	h.log.Info("no owner yet: send this message to the bot in a direct chat within 24 hours to become its owner (one use)", "message", "/owner "+code)
}

// startAdmin starts the admin endpoint with its token (made at the first
// start, kept in <data_dir>/admin.token) and announces the status page: its
// address in the log, the link with the token on the terminal.
func (h *Host) startAdmin(listen string) error {
	log := h.log.Named("admin")
	file := h.cfg.Path() // reloaded by POST /reload
	path := admin.TokenPath(h.cfg.DataDir)
	token, err := admin.LoadOrCreateToken(path)
	if err != nil {
		return fmt.Errorf("admin endpoint: %w", err)
	}
	h.redact.Add(token)
	h.admin, err = admin.Start(admin.Options{
		// The 401 names the file, not where data_dir is.
		Listen: listen, Token: token, TokenHint: "the token is in " + admin.TokenFile + " in clawhost's data_dir",
		TLSCert: h.cfg.Admin.TLSCert, TLSKey: h.cfg.Admin.TLSKey,
		Logger: log, Metrics: h.metrics.Handler(), Pprof: h.cfg.Admin.Pprof,
		Source:     &statusSource{h: h},
		Retrier:    &statusSource{h: h},
		Pairing:    h.pairingAPI("admin"),
		Reports:    reports.Reports{DB: h.db},
		Reloader:   reloadFunc(func() admin.Reload { return h.reloadFile(file) }),
		Actions:    &statusSource{h: h},
		Location:   h.cfg.Messages.Location(),
		Budgets:    func() []admin.Budget { return reports.Budgets(h.cfg) },
		Exporter:   &statusSource{h: h},
		RuntimeDir: h.cfg.DataDir,
		Attach: attach.Handler(h.attach, func(ctx context.Context, chat string) (string, error) {
			p := h.gw.Access().Policy()
			return attach.Resolve(ctx, h.db, &p, chat)
		}, log.Named("attach")),
	})
	if err != nil {
		return fmt.Errorf("admin endpoint on %s: %w (another clawhost, or another program, listens there: stop it, or set admin { listen } to a free address, or \"\" to run without it)", listen, err)
	}
	announceLink(h.log, h.opts.Terminal, "status page", h.admin.URL(), token, path)
	return nil
}

// announceLink tells the operator where a page that needs a token is: the
// log gets its address without the token and, when there is no terminal,
// where the token is kept (tokenFile); the terminal gets the whole link,
// written to it directly so that no log sink ever holds the token.
func announceLink(log hclog.Logger, term io.Writer, what, addr, token, tokenFile string) {
	if term == nil {
		log.Info(what, "url", addr, "token_file", tokenFile, "open", addr+"?token=<the token in token_file>")
		return
	}
	log.Info(what, "url", addr, "link", "printed on the terminal")
	fmt.Fprintf(term, "\n  clawhost %s: %s?token=%s\n\n", what, addr, token)
}

// announcePluginLink announces the page a ready plugin serves (the web
// chat's link with its token) once per link: on the terminal whole, in
// the log without its query (where the token is).
func (h *Host) announcePluginLink(instance, link string) {
	h.linksMu.Lock()
	if h.links == nil {
		h.links = map[string]string{}
	}
	seen := h.links[instance] == link
	h.links[instance] = link
	h.linksMu.Unlock()
	if seen {
		return
	}
	bare := link
	if u, err := url.Parse(link); err == nil {
		u.RawQuery, u.Fragment = "", ""
		bare = u.String()
	}
	log := h.log.With("instance", instance)
	if h.opts.Terminal == nil {
		log.Info("plugin page", "url", bare, "link", "with its token: clawhost status, or the status page")
		return
	}
	log.Info("plugin page", "url", bare, "link", "printed on the terminal")
	fmt.Fprintf(h.opts.Terminal, "\n  clawhost %s: %s\n\n", instance, link)
}
