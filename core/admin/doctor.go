package admin

import (
	"net/http"
	"time"
)

// Doctor is the status page's section of clawhost doctor's checks, run by
// the host itself on demand (POST /doctor): the claude CLI, data_dir and
// the workspaces, the disk, the plugin binaries, each channel's
// credentials with its platform, the ports and the memory (the database
// is the store item). At is zero until the first run.
type Doctor struct {
	At      time.Time     `json:"at"`
	Running bool          `json:"running,omitempty"`
	Checks  []DoctorCheck `json:"checks,omitempty"`
}

// DoctorCheck is one finding: Verdict is ok, warn, fail or skip; Do what
// to do about it ("" when ok).
type DoctorCheck struct {
	Name    string `json:"name"`
	Verdict string `json:"verdict"`
	Found   string `json:"found"`
	Do      string `json:"do,omitempty"`
}

// Failed is the number of checks that fail.
func (d Doctor) Failed() int {
	n := 0
	for _, c := range d.Checks {
		if c.Verdict == "fail" {
			n++
		}
	}
	return n
}

// DoctorRunner is implemented by Actions that can run doctor's checks
// (POST /doctor). RunDoctor starts a run in the background and returns at
// once; a run already under way is not started again. Its outcome shows
// in the snapshot's Doctor.
type DoctorRunner interface {
	RunDoctor()
}

// runDoctor serves POST /doctor.
func (h *handler) runDoctor(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	d, ok := h.actions.(DoctorRunner)
	if !ok {
		h.act(w, r, http.StatusNotFound, "checks are not available")
		return
	}
	d.RunDoctor()
	h.act(w, r, http.StatusOK, "checks started")
}
