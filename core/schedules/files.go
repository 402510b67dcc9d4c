package schedules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/store"
)

// The files earlier versions kept schedules in, in data_dir: those added
// from chat (a JSON array of command.ScheduleEntry) and the last run of
// every job (a JSON object, job → due time). The store keeps both now.
const (
	legacySchedulesFile = "schedules.json"
	legacyRunsFile      = "schedule.json"
	// migratedSuffix is added to a file moved into the store: it is kept,
	// never deleted, and no longer read.
	migratedSuffix = ".migrated"
)

// migrateScheduleFiles moves the schedule files of data_dir into db, once:
// each file is read, its content added (a schedule whose name the store
// holds is kept as stored; a run never moves a job's last run back), and
// the file renamed to *.migrated. Idempotent: a start that dies half-way
// does it again to the same result. A file that cannot be read is left in
// place and reported; the other is moved all the same.
func migrateScheduleFiles(ctx context.Context, dataDir string, db store.Schedules, log hclog.Logger) error {
	var errs []error
	if err := migrateFile(filepath.Join(dataDir, legacySchedulesFile), log, func(b []byte) (int, error) {
		var list []command.ScheduleEntry
		if err := json.Unmarshal(b, &list); err != nil {
			return 0, err
		}
		stored, err := db.ListSchedules(ctx)
		if err != nil {
			return 0, err
		}
		n := 0
		for _, e := range list {
			sc := store.Schedule{Name: e.Name, Cron: e.Cron, At: e.At, Chat: e.Chat, Group: e.Group, Prompt: e.Prompt, Sender: e.Sender}
			if i := slices.IndexFunc(stored, func(x store.Schedule) bool { return x.Name == e.Name }); i >= 0 {
				if !sameSchedule(stored[i], sc) || stored[i].Sender != sc.Sender {
					log.Warn("a schedule of data_dir has the name of another one in the store; the stored one is kept", "name", e.Name)
				}
				continue // moved before (a start that died before the rename), or another host's
			}
			_, err := db.AddSchedule(ctx, sc)
			switch {
			case errors.Is(err, store.ErrScheduleExists):
				log.Warn("a schedule of data_dir has the name of another one in the store; the stored one is kept", "name", e.Name)
			case err != nil:
				return n, err
			default:
				n++
			}
		}
		return n, nil
	}); err != nil {
		errs = append(errs, err)
	}
	if err := migrateFile(filepath.Join(dataDir, legacyRunsFile), log, func(b []byte) (int, error) {
		var runs map[string]time.Time
		if err := json.Unmarshal(b, &runs); err != nil {
			return 0, err
		}
		for job, at := range runs {
			if job == "" || at.IsZero() {
				continue
			}
			if err := db.RecordScheduleRun(ctx, job, at); err != nil {
				return 0, err
			}
		}
		return len(runs), nil
	}); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// migrateFile reads path (absent: nothing to do), hands its content to
// move and renames it to a free *.migrated name once move succeeded.
func migrateFile(path string, log hclog.Logger, move func([]byte) (int, error)) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	n, err := move(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	to, err := freeName(path + migratedSuffix)
	if err != nil {
		return err
	}
	if err := os.Rename(path, to); err != nil {
		return err
	}
	log.Info("schedules moved from data_dir into the store", "file", path, "entries", n, "kept_as", to)
	return nil
}

// freeName is path, or path.N for the first N from 2 that names no file:
// a file migrated before is never replaced.
func freeName(path string) (string, error) {
	for i := 1; i < 1000; i++ {
		p := path
		if i > 1 {
			p = fmt.Sprintf("%s.%d", path, i)
		}
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p, nil
		} else if err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("%s: no free name", path)
}
