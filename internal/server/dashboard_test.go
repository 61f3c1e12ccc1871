package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// readRepoFile reads a file by its path from the repository root.
func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readDashboard parses deploy/grafana/samsa-dashboard.json and checks the
// shape Grafana needs to import it: a Prometheus data source variable that
// every query uses, and panels with a type and a place on the grid.
func readDashboard(t *testing.T) map[string]any {
	t.Helper()
	var dashboard map[string]any
	if err := json.Unmarshal([]byte(readRepoFile(t, "deploy/grafana/samsa-dashboard.json")), &dashboard); err != nil {
		t.Fatalf("dashboard is not valid JSON: %v", err)
	}
	if dashboard["uid"] == nil || dashboard["title"] == nil {
		t.Error("dashboard has no uid or title")
	}
	hasDatasource := false
	templating, _ := dashboard["templating"].(map[string]any)
	list, _ := templating["list"].([]any)
	for _, v := range list {
		variable, _ := v.(map[string]any)
		if variable["type"] == "datasource" && variable["query"] == "prometheus" && variable["name"] == "datasource" {
			hasDatasource = true
		}
	}
	if !hasDatasource {
		t.Error("dashboard has no Prometheus data source variable named datasource")
	}
	panels, _ := dashboard["panels"].([]any)
	rows := 0
	for _, p := range panels {
		panel, _ := p.(map[string]any)
		if panel["type"] == "row" {
			rows++
		}
		if panel["type"] == nil || panel["gridPos"] == nil || panel["id"] == nil {
			t.Errorf("panel %v lacks a type, id or gridPos", panel["title"])
		}
		if panel["type"] != "row" {
			ds, _ := panel["datasource"].(map[string]any)
			if ds["uid"] != "${datasource}" {
				t.Errorf("panel %v does not use the datasource variable", panel["title"])
			}
		}
	}
	if rows < 7 {
		t.Errorf("dashboard has %d rows, want requests, latency, throughput, partitions, group lag, runtime and disk", rows)
	}
	return dashboard
}

// collectExprs appends every PromQL expression in v: targets' expr and
// template variables' definition.
func collectExprs(v any, into *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for key, child := range v {
			if s, ok := child.(string); ok && (key == "expr" || key == "definition") {
				*into = append(*into, s)
				continue
			}
			collectExprs(child, into)
		}
	case []any:
		for _, child := range v {
			collectExprs(child, into)
		}
	}
}
