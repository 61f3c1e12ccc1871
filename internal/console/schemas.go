package console

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

type subjectRow struct {
	Name          string
	Versions      int
	Latest        int
	Type          string
	Compatibility string
}

type versionRow struct {
	Version int
	ID      int
	Type    string
	Schema  string
}

type diffLine struct {
	Kind string // "same", "added", "removed"
	Text string
}

type subjectData struct {
	Subject       string
	Compatibility string
	Versions      []versionRow
	Shown         versionRow
	DiffFrom      int
	Diff          []diffLine
	DiffTruncated bool
}

var errNoRegistry = errors.New("this node does not run the schema registry (schema.registry.listeners is empty)")

func (c *Console) schemasPage(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	if s.registry == nil {
		c.render(w, r, http.StatusOK, "schemas", page{Title: "Schemas", Nav: "schemas", Notice: errNoRegistry.Error()})
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	subjects, err := s.registry.Subjects(ctx)
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, fmt.Errorf("list subjects: %w", err))
		return
	}
	var rows []subjectRow
	for _, subject := range subjects {
		row := subjectRow{Name: subject}
		versions, err := s.registry.SubjectVersions(ctx, subject)
		if err == nil && len(versions) > 0 {
			row.Versions, row.Latest = len(versions), versions[len(versions)-1]
			if latest, err := s.registry.SchemaByVersion(ctx, subject, row.Latest); err == nil {
				row.Type = latest.Type.String()
			}
		}
		if results := s.registry.Compatibility(ctx, subject); len(results) == 1 && results[0].Err == nil {
			row.Compatibility = results[0].Level.String()
		}
		rows = append(rows, row)
	}
	c.render(w, r, http.StatusOK, "schemas", page{Title: "Schemas", Nav: "schemas", Data: rows})
}

func (c *Console) subjectPage(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	if s.registry == nil {
		c.fail(w, r, http.StatusNotFound, errNoRegistry)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	subject := r.PathValue("subject")
	schemas, err := s.registry.Schemas(ctx, subject)
	if err != nil {
		c.fail(w, r, http.StatusNotFound, fmt.Errorf("subject %s: %w", subject, err))
		return
	}
	data := subjectData{Subject: subject}
	for _, schema := range schemas {
		data.Versions = append(data.Versions, versionRow{Version: schema.Version, ID: schema.ID, Type: schema.Type.String(), Schema: schema.Schema.Schema})
	}
	if results := s.registry.Compatibility(ctx, subject); len(results) == 1 && results[0].Err == nil {
		data.Compatibility = results[0].Level.String()
	}
	if len(data.Versions) == 0 {
		c.fail(w, r, http.StatusNotFound, fmt.Errorf("subject %s has no versions", subject))
		return
	}
	data.Shown = data.Versions[len(data.Versions)-1]
	if v, err := strconv.Atoi(r.URL.Query().Get("version")); err == nil {
		for _, row := range data.Versions {
			if row.Version == v {
				data.Shown = row
			}
		}
	}
	if from, err := strconv.Atoi(r.URL.Query().Get("diff")); err == nil {
		for _, row := range data.Versions {
			if row.Version == from {
				data.DiffFrom = from
				data.Diff, data.DiffTruncated = diffLines(prettySchema(row.Schema), prettySchema(data.Shown.Schema))
			}
		}
	}
	data.Shown.Schema = prettySchema(data.Shown.Schema)
	c.render(w, r, http.StatusOK, "subject", page{Title: "Subject " + subject, Nav: "schemas", Data: data})
}

func prettySchema(text string) string {
	if pretty, ok := prettyJSON([]byte(text)); ok {
		return pretty
	}
	return text
}

// diffLinesMax bounds the lines of each side a diff compares (the table is
// quadratic).
const diffLinesMax = 2000

// diffLines is a line diff of a and b by longest common subsequence.
func diffLines(a, b string) ([]diffLine, bool) {
	left, right := strings.Split(a, "\n"), strings.Split(b, "\n")
	truncated := len(left) > diffLinesMax || len(right) > diffLinesMax
	left, right = left[:min(len(left), diffLinesMax)], right[:min(len(right), diffLinesMax)]
	// common[i][j] is the LCS length of left[i:] and right[j:].
	common := make([][]int32, len(left)+1)
	for i := range common {
		common[i] = make([]int32, len(right)+1)
	}
	for i := len(left) - 1; i >= 0; i-- {
		for j := len(right) - 1; j >= 0; j-- {
			if left[i] == right[j] {
				common[i][j] = common[i+1][j+1] + 1
			} else {
				common[i][j] = max(common[i+1][j], common[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < len(left) && j < len(right) {
		switch {
		case left[i] == right[j]:
			out = append(out, diffLine{"same", left[i]})
			i, j = i+1, j+1
		case common[i+1][j] >= common[i][j+1]:
			out = append(out, diffLine{"removed", left[i]})
			i++
		default:
			out = append(out, diffLine{"added", right[j]})
			j++
		}
	}
	for ; i < len(left); i++ {
		out = append(out, diffLine{"removed", left[i]})
	}
	for ; j < len(right); j++ {
		out = append(out, diffLine{"added", right[j]})
	}
	return out, truncated
}
