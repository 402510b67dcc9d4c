package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// CheckResult is what Check learned about a plugin and its config block.
type CheckResult struct {
	// Description is what the plugin says about itself.
	Description pluginclient.Description
	// Schema is the config schema the plugin declares.
	Schema schema.Schema
	// Verdict is what the plugin's own checks (Validate) found in the
	// block, warnings included. Nil when it found nothing, when it
	// predates Validate (it answered Unimplemented), or when decode gave
	// no JSON to check.
	Verdict schema.Diagnostics
	// Report is what the plugin's live checks found (Supervisor.Probe);
	// nil when they did not run: Check, a block that did not decode or
	// that the plugin rejected, or a plugin without live checks.
	Report *probe.Report
}

// Check starts the plugin of spec in a probe process of its own, reads its
// description and config schema, hands the schema to decode and, when
// decode returns the block's JSON, asks the plugin to Validate it; then it
// stops the process. Nothing is configured, and a running instance of the
// same name is not touched. `clawhost validate` checks every plugin with
// it, and a reload every new or changed one before anything is stopped.
// ctx bounds the whole probe (the handshake is also bounded by the spec's
// start timeout).
func (h *Supervisor) Check(ctx context.Context, spec Spec, decode func(schema.Schema) []byte) (CheckResult, error) {
	return h.check(ctx, spec, decode, false)
}

// Probe is Check, then, when the block decoded and the plugin's own checks
// found no error in it, the plugin's live checks (sdk.Plugin.Probe) on it,
// in the same process: the plugin asks its platform whether it takes the
// credentials and who the bot is, and may read (only) spec.DataDir. The
// process is never configured; a running instance of the same name is not
// touched. `clawhost doctor`, `clawhost init` and `clawhost validate
// -probe` run it. A plugin without live checks leaves Report nil. ctx
// bounds the whole probe.
func (h *Supervisor) Probe(ctx context.Context, spec Spec, decode func(schema.Schema) []byte) (CheckResult, error) {
	return h.check(ctx, spec, decode, true)
}

func (h *Supervisor) check(ctx context.Context, spec Spec, decode func(schema.Schema) []byte, live bool) (CheckResult, error) {
	var res CheckResult
	inst := newInstance(h, spec)
	defer inst.cancel()
	inst.log = inst.log.Named("check") // not the running instance's lines
	proc, plug, err := inst.launch()
	if err != nil {
		// As at start: what the plugin wrote to stderr says why ("plugin
		// offers no kind"); go-plugin's error only says it exited.
		return res, inst.withStderr(err)
	}
	defer h.shutdown(inst.log, proc)
	if res.Description, err = plug.Describe(ctx); err != nil {
		return res, fmt.Errorf("probe plugin %s: %w", spec.Instance, err)
	}
	if res.Schema, err = plug.ConfigSchema(ctx); err != nil {
		return res, fmt.Errorf("probe plugin %s: %w", spec.Instance, err)
	}
	js := decode(res.Schema)
	if js == nil {
		return res, nil
	}
	if res.Verdict, err = validate(ctx, plug, spec.Instance, js); err != nil || !live || hasErrors(res.Verdict) {
		return res, err
	}
	rep, err := plug.Probe(ctx, schema.Config{Instance: spec.Instance, JSON: js, DataDir: spec.DataDir})
	switch {
	case errors.Is(err, pluginclient.ErrUnimplemented):
		return res, nil
	case err != nil:
		return res, fmt.Errorf("probe plugin %s: %w", spec.Instance, err)
	}
	res.Report = &rep
	return res, nil
}

// validate asks the plugin to check a decoded block. A plugin that predates
// Validate has no verdict.
func validate(ctx context.Context, plug *pluginclient.Plugin, instance string, js []byte) (schema.Diagnostics, error) {
	diags, err := plug.Validate(ctx, schema.Config{Instance: instance, JSON: js})
	if errors.Is(err, pluginclient.ErrUnimplemented) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("validate plugin %s: %w", instance, err)
	}
	return diags, nil
}

// hasErrors reports whether diags hold an error (not only warnings).
func hasErrors(diags schema.Diagnostics) bool {
	for _, d := range diags {
		if !d.Warning {
			return true
		}
	}
	return false
}

// checkBeforeConfigure runs the plugin's own checks on the block it is
// about to be configured with, in the process just started. A block the
// plugin rejects settles the instance as misconfigured, with the
// diagnostics at their file:line:col (Spec.Explain); warnings are logged
// and the start goes on. The check is bounded by the start timeout; a
// plugin that predates Validate is configured without it.
func (i *Instance) checkBeforeConfigure(ctx context.Context, plug *pluginclient.Plugin, sch schema.Schema, js []byte) error {
	vctx, cancel := context.WithTimeout(ctx, i.startTimeout())
	diags, err := validate(vctx, plug, i.spec.Instance, js)
	cancel()
	if err != nil {
		return err
	}
	if len(diags) == 0 {
		return nil
	}
	text := i.explain(sch, diags)
	if hasErrors(diags) {
		return &runError{StateMisconfigured, fmt.Errorf("configure plugin %s: the plugin rejected its config block:\n%s", i.spec.Instance, text)}
	}
	i.log.Warn("the plugin warns about its config block", "diagnostics", text)
	return nil
}

// explain formats the plugin's diagnostics with Spec.Explain, or as plain
// text without it.
func (i *Instance) explain(sch schema.Schema, diags schema.Diagnostics) string {
	if f := i.spec.Explain; f != nil {
		return strings.TrimRight(f(sch, diags), "\n")
	}
	return diags.Error()
}

// Changed reports whether Apply would start the instance named so with
// this fingerprint afresh: it is not running, or it runs with another
// fingerprint. An unchanged instance, even a settled one, is not changed.
func (h *Supervisor) Changed(instance, fingerprint string) bool {
	inst := h.Instance(instance)
	return inst == nil || inst.spec.Fingerprint != fingerprint
}
