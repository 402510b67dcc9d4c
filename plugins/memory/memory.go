// Package memory is the memory tool plugin: one tool, search, that finds
// passages of the calling agent's memory files — MEMORY.md and memory/*.md
// in its workspace — ranked by relevance, each with its file and line.
//
// The workspace comes from the host with each call (tool.CallRequest's
// Workspace: the agent's, from the host's configuration), never from this
// plugin's configuration, so one instance serves every agent it is granted
// to, each searching its own files.
//
// Search is SQLite's FTS5 (BM25 ranking, Porter stemming over the unicode61
// tokenizer) in an in-memory database, through modernc.org/sqlite — the
// pure-Go SQLite clawhost's store already uses, so the plugin adds no
// module to the build. Measured (static, stripped): this plugin is 12.0 MB,
// the smallest tool plugin (examples/whoami-tool) 7.8 MB; a program that
// only builds a bleve v2.6.3 in-memory index is 14.5 MB on its own, brings
// some 25 modules, and its default analyzer does not stem. The index of a
// workspace is rebuilt when one of its files changes (its name or its
// text), at the next search.
//
// The plugin runs outside the agent's sandbox, while the agent writes its
// memory files: the files are opened through an os.Root on the workspace,
// so a symbolic link the agent made cannot lead the search to a file
// outside it; only regular files are read, at most maxFiles files of at
// most maxFileBytes each.
package memory

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, FTS5 included

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/tool"
)

// Limits of what one search reads and returns.
const (
	maxFiles        = 500
	maxFileBytes    = 1 << 20
	maxPassageLines = 40
	maxPassageRunes = 1200
	defaultResults  = 5
	maxResults      = 20
)

// Plugin is the memory plugin as sdk.Serve runs it.
func Plugin() sdk.Plugin {
	return sdk.Plugin{Name: "memory", Version: "0.1.0", Schema: schema.Schema{}, Tool: New()}
}

// Searcher is the memory plugin's tool provider.
type Searcher struct {
	mu      sync.Mutex
	db      *sql.DB
	indexed map[string]string // workspace -> fingerprint of its files when indexed
}

var _ tool.Provider = (*Searcher)(nil)

// New returns a Searcher with no index yet.
func New() *Searcher { return &Searcher{indexed: map[string]string{}} }

const searchDescription = "Search your memory files (MEMORY.md and memory/*.md in your workspace) for passages about something: a ranked full-text search (word stems match: \"cats\" finds \"cat\"). " +
	"Returns the best passages, each with its file and line, so you can read or edit around it. Use it before answering from memory, and to find where a fact is written."

// Tools implements tool.Provider.
func (s *Searcher) Tools(context.Context) ([]tool.Spec, error) {
	return []tool.Spec{{
		Name:        "search",
		Description: searchDescription,
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"words to look for"},` +
			`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"how many passages at most (default 5)"}},` +
			`"required":["query"]}`),
	}}, nil
}

// Call implements tool.Provider: search only, which reads and never
// writes, so a repeated call id answers the same.
func (s *Searcher) Call(ctx context.Context, req tool.CallRequest) (tool.Result, error) {
	if req.Tool != "search" {
		return tool.Result{}, fmt.Errorf("%w %q", tool.ErrUnknownTool, req.Tool)
	}
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(req.Arguments, &in); err != nil {
		return tool.Result{Text: "The arguments are not {\"query\": \"...\"}.", IsError: true}, nil
	}
	if req.Workspace == "" {
		return tool.Result{Text: "The host named no workspace to search.", IsError: true}, nil
	}
	limit := in.Limit
	if limit <= 0 {
		limit = defaultResults
	}
	limit = min(limit, maxResults)
	hits, err := s.Search(ctx, req.Workspace, in.Query, limit)
	if errors.Is(err, errNoTerms) {
		return tool.Result{Text: "Give words to search for.", IsError: true}, nil
	}
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Text: format(in.Query, hits)}, nil
}

// Hit is one passage found.
type Hit struct {
	// File is relative to the workspace ("MEMORY.md", "memory/2026-11.md").
	File string
	// Line is the passage's first line (1-based).
	Line int
	Text string
}

var errNoTerms = errors.New("no words to search for")

// Search returns the passages of workspace's memory files that best match
// query, best first, at most limit.
func (s *Searcher) Search(ctx context.Context, workspace, query string, limit int) ([]Hit, error) {
	match := matchExpr(query)
	if match == "" {
		return nil, errNoTerms
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.index(ctx, workspace); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT file, line, body FROM passages WHERE passages MATCH ? AND ws = ? ORDER BY bm25(passages) LIMIT ?`, match, workspace, limit)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.File, &h.Line, &h.Text); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// matchExpr turns free text into an FTS5 query: each word quoted (no
// operator or column syntax of the model's text reaches FTS5), any of
// them matching; BM25 ranks passages with more and rarer words first.
func matchExpr(query string) string {
	words := strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var terms []string
	for _, w := range words {
		q := `"` + w + `"`
		if !slices.Contains(terms, q) {
			terms = append(terms, q)
		}
		if len(terms) == 32 {
			break
		}
	}
	return strings.Join(terms, " OR ")
}

// index makes the index of workspace current. Called with s.mu held.
func (s *Searcher) index(ctx context.Context, workspace string) error {
	if s.db == nil {
		db, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			return err
		}
		db.SetMaxOpenConns(1) // one connection: one in-memory database
		if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE passages USING fts5(ws UNINDEXED, file UNINDEXED, line UNINDEXED, body, tokenize='porter unicode61')`); err != nil {
			_ = db.Close()
			return fmt.Errorf("create the index: %w", err)
		}
		s.db = db
	}
	files, err := memoryFiles(workspace)
	if err != nil {
		return err
	}
	fp := fingerprint(files)
	if s.indexed[workspace] == fp {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `DELETE FROM passages WHERE ws = ?`, workspace); err != nil {
		return err
	}
	for _, f := range files {
		for _, p := range passages(f.text) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO passages (ws, file, line, body) VALUES (?, ?, ?, ?)`, workspace, f.name, p.line, p.text); err != nil {
				return err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.indexed[workspace] = fp
	return nil
}

// memoryFile is one memory file read.
type memoryFile struct {
	name, text string
}

// memoryFiles reads MEMORY.md and memory/*.md of workspace through an
// os.Root: no path, and no link the agent made, leads outside it. Files
// that are not regular, or larger than maxFileBytes, are left out.
func memoryFiles(workspace string) ([]memoryFile, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, fmt.Errorf("open the workspace: %w", err)
	}
	defer root.Close()
	names := []string{"MEMORY.md"}
	if entries, err := fs.ReadDir(root.FS(), "memory"); err == nil {
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".md") && len(names) < maxFiles {
				names = append(names, path.Join("memory", e.Name()))
			}
		}
	}
	var out []memoryFile
	for _, name := range names {
		f, err := root.Open(name)
		if err != nil {
			continue // absent, or a link out of the workspace
		}
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxFileBytes {
			_ = f.Close()
			continue
		}
		b, err := io.ReadAll(io.LimitReader(f, maxFileBytes))
		_ = f.Close()
		if err != nil {
			continue
		}
		out = append(out, memoryFile{name: name, text: string(b)})
	}
	return out, nil
}

// fingerprint is what the index of files was made from: each file's name
// and a hash of its text, which is read at every search anyway. (Not the
// size and modification time: a rewrite of the same size within one tick
// of the file system's clock kept the old index.)
func fingerprint(files []memoryFile) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", f.name, len(f.text))
		io.WriteString(h, f.text)
	}
	return string(h.Sum(nil))
}

// passage is a block of a memory file and its first line.
type passage struct {
	line int
	text string
}

// passages splits a markdown file into blocks: a heading starts one, a
// blank line ends one, and none is longer than maxPassageLines. A heading
// is kept with the text under it (a heading alone is a poor answer).
func passages(text string) []passage {
	var out []passage
	var cur []string
	start := 0
	flush := func() {
		if len(cur) > 0 && strings.TrimSpace(strings.Join(cur, "")) != "" {
			out = append(out, passage{line: start, text: strings.Join(cur, "\n")})
		}
		cur = nil
	}
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, "\r")
		heading := strings.HasPrefix(l, "#")
		switch {
		case strings.TrimSpace(l) == "":
			if len(cur) == 1 && strings.HasPrefix(cur[0], "#") {
				continue // keep a heading with what follows
			}
			flush()
			continue
		case heading, len(cur) >= maxPassageLines:
			flush()
		}
		if len(cur) == 0 {
			start = i + 1
		}
		cur = append(cur, l)
	}
	flush()
	return out
}

// format is the tool's answer: each passage under its file:line.
func format(query string, hits []Hit) string {
	if len(hits) == 0 {
		return fmt.Sprintf("Nothing in MEMORY.md or memory/*.md matches %q.", query)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d passage(s) for %q, best first:\n", len(hits), query)
	for _, h := range hits {
		text := h.Text
		if r := []rune(text); len(r) > maxPassageRunes {
			text = string(r[:maxPassageRunes]) + " …"
		}
		fmt.Fprintf(&b, "\n%s:%d\n%s\n", h.File, h.Line, text)
	}
	return b.String()
}
