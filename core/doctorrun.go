package core

import (
	"context"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/doctor"
)

// doctorRuns runs doctor's checks inside the host for the status page
// (POST /doctor) and keeps the last outcome. One run at a time.
type doctorRuns struct {
	mu   sync.Mutex
	last admin.Doctor
}

// view is the last run (or the one under way) for the snapshot.
func (d *doctorRuns) view() *admin.Doctor {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.last
	return &v
}

// RunDoctor implements admin.DoctorRunner: it runs the checks against the
// configuration in force, in the background, bounded by two minutes.
func (s *statusSource) RunDoctor() {
	h := s.h
	d := &h.doctor
	d.mu.Lock()
	if d.last.Running {
		d.mu.Unlock()
		return
	}
	d.last.Running = true
	d.mu.Unlock()
	go func() {
		h.reloading.Lock() // h.cfg is replaced under it
		cfg := h.cfg
		h.reloading.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		checks := doctor.InHost(ctx, cfg, h.plugins)
		out := make([]admin.DoctorCheck, len(checks))
		for i, c := range checks {
			out[i] = admin.DoctorCheck(c)
		}
		d.mu.Lock()
		d.last = admin.Doctor{At: time.Now(), Checks: out}
		d.mu.Unlock()
		h.log.Info("doctor's checks done (status page)", "checks", len(out), "failed", d.view().Failed())
	}()
}
