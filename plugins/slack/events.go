package slack

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/status"
)

// Events API mode (mode = "events"): Slack POSTs events, interactions and
// slash commands to listen; every request's signature is checked with the
// signing secret (X-Slack-Signature over v0:<timestamp>:<body>) and a
// timestamp more than 5 minutes off is refused (the replay window), both
// by slack-go's SecretsVerifier. An event is answered 200 once the host
// stored it; an event the host did not take is answered 503, so Slack
// sends it again (it retries three times).

// maxEventBody bounds a request body.
const maxEventBody = 1 << 20

// serveEvents runs the HTTP server until ctx ends.
func (a *Adapter) serveEvents(ctx context.Context, inbox channel.Inbox) error {
	for ctx.Err() == nil {
		_, err := a.whoami(ctx)
		if err == nil {
			break
		}
		if msg := fatal(err); msg != "" {
			if !a.attention(ctx, msg) {
				return nil
			}
			continue
		}
		a.status.Report(status.Status{State: status.Degraded, Message: "cannot reach Slack; retrying: " + errText(err)})
		if a.sleep(ctx, backoffMin*5) != nil {
			return nil
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		a.status.Report(status.Status{State: status.NeedsAttention, Message: "cannot listen on " + a.cfg.Listen + ": " + err.Error()})
		<-ctx.Done()
		return nil
	}
	srv := &http.Server{Handler: a.eventsHandler(ctx, inbox), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	a.log.Info("listening for slack events", "addr", ln.Addr().String())
	a.status.Report(status.Status{State: status.Ready})
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// eventsHandler serves /slack/events, /slack/interactions and
// /slack/commands.
func (a *Adapter) eventsHandler(ctx context.Context, inbox channel.Inbox) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /slack/events", func(w http.ResponseWriter, r *http.Request) {
		body, ok := a.verified(w, r)
		if !ok {
			return
		}
		var outer struct {
			Type      string `json:"type"`
			Challenge string `json:"challenge"`
		}
		if json.Unmarshal(body, &outer) != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		switch outer.Type {
		case "url_verification":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, outer.Challenge)
			return
		case "event_callback":
			if err := a.onEventCallback(r.Context(), inbox, body); err != nil {
				http.Error(w, "not stored", http.StatusServiceUnavailable)
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("POST /slack/interactions", func(w http.ResponseWriter, r *http.Request) {
		body, ok := a.verified(w, r)
		if !ok {
			return
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		var cb slack.InteractionCallback
		if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
			http.Error(w, "bad payload", http.StatusBadRequest)
			return
		}
		done := make(chan struct{})
		go a.onInteraction(ctx, inbox, cb, func() { close(done) })
		a.answer(w, r, done)
	})
	mux.HandleFunc("POST /slack/commands", func(w http.ResponseWriter, r *http.Request) {
		body, ok := a.verified(w, r)
		if !ok {
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		cmd, err := slack.SlashCommandParse(r)
		if err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		done := make(chan struct{})
		go a.onSlashCommand(ctx, inbox, cmd, func() { close(done) })
		a.answer(w, r, done)
	})
	return mux
}

// answer writes 200 once done closes (the host stored the request, or
// the acknowledgement deadline came).
func (a *Adapter) answer(w http.ResponseWriter, r *http.Request, done <-chan struct{}) {
	select {
	case <-done:
		w.WriteHeader(http.StatusOK)
	case <-r.Context().Done():
	}
}

// verified reads the body of r and checks its signature and timestamp;
// it answers 401 itself when they fail.
func (a *Adapter) verified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxEventBody+1))
	if err != nil || len(body) > maxEventBody {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	sv, err := slack.NewSecretsVerifier(r.Header, a.cfg.SigningSecret)
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		a.log.Warn("refusing a request without a valid slack signature", "path", r.URL.Path, "remote", r.RemoteAddr)
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}
