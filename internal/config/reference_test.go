package config

import (
	"flag"
	"os"
	"strings"
	"testing"
)

// updateReference rewrites docs/configuration.md from the key tables:
//
//	go test ./internal/config -run TestConfigurationReference -update
var updateReference = flag.Bool("update", false, "rewrite docs/configuration.md from the key tables")

const referencePath = "../../docs/configuration.md"

// TestConfigurationReference keeps docs/configuration.md equal to what the
// key tables say, so the reference never drifts from the code: a new key, a
// changed default or a reworded Doc fails here until the file is rewritten.
func TestConfigurationReference(t *testing.T) {
	want := renderReference()
	if *updateReference {
		if err := os.WriteFile(referencePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./internal/config -run TestConfigurationReference -update)", err)
	}
	if string(got) == want {
		return
	}
	gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(want, "\n")
	for i := range max(len(gotLines), len(wantLines)) {
		var g, w string
		if i < len(gotLines) {
			g = gotLines[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if g != w {
			t.Fatalf("docs/configuration.md is stale at line %d:\n have: %s\n want: %s\nrewrite it with: go test ./internal/config -run TestConfigurationReference -update", i+1, g, w)
		}
	}
}

// TestReferenceListsEveryKey checks the rendering itself: every key of both
// tables appears with its default, so the golden file cannot be regenerated
// into something that omits keys.
func TestReferenceListsEveryKey(t *testing.T) {
	doc := renderReference()
	for _, keys := range [][]Key{BrokerKeys(), TopicKeys()} {
		for _, k := range keys {
			row := "| `" + k.Name + "` | " + k.Type.String() + " | " + referenceDefault(k) + " |"
			if !strings.Contains(doc, row) {
				t.Errorf("reference has no row starting %q", row)
			}
		}
	}
}

const referenceIntro = `# Configuration reference

<!-- Generated from the key tables in internal/config (keys.go, topic.go).
     Do not edit by hand: change the key's Doc or default, then run
     go test ./internal/config -run TestConfigurationReference -update -->

Samsa reads Apache Kafka's configuration keys, with Kafka's names, types and
defaults. Keys whose description starts with "Samsa:" are Samsa's own or have
a Samsa default chosen so that a single node starts with no configuration.

A broker key is set, lowest precedence first, by its default, the
` + "`server.properties`" + ` file given to ` + "`samsa server --config`" + `, an environment
variable (` + "`SAMSA_`" + ` and the key upper-cased with dots as underscores), and
` + "`--override key=value`" + `. Keys marked dynamic can also be changed on a running
broker with IncrementalAlterConfigs (` + "`samsa configs`" + ` or Kafka's
` + "`kafka-configs.sh`" + `). An unknown key is a warning; an invalid value stops the
broker with a message naming the key.

A default of *(none)* means the key is unset unless given, and another key
supplies the behaviour, as the description says.

## Broker keys

| Key | Type | Default | Dynamic | Environment variable | Description |
|---|---|---|---|---|---|
`

const referenceTopicIntro = `
## Topic keys

A topic key is set when the topic is created or with (Incremental)AlterConfigs.
Unset, it takes the effective value of its broker synonym, else the default
shown.

| Key | Type | Default | Broker synonym | Description |
|---|---|---|---|---|
`

func renderReference() string {
	var b strings.Builder
	b.WriteString(referenceIntro)
	for _, k := range BrokerKeys() {
		dynamic := "no"
		if k.Dynamic {
			dynamic = "yes"
		}
		b.WriteString("| `" + k.Name + "` | " + k.Type.String() + " | " + referenceDefault(k) + " | " + dynamic +
			" | `" + EnvName(k.Name) + "` | " + referenceCell(k.Doc) + " |\n")
	}
	b.WriteString(referenceTopicIntro)
	for _, k := range TopicKeys() {
		synonym := ""
		if k.Synonym != "" {
			synonym = "`" + k.Synonym + "`"
		}
		b.WriteString("| `" + k.Name + "` | " + k.Type.String() + " | " + referenceDefault(k) + " | " + synonym +
			" | " + referenceCell(k.Doc) + " |\n")
	}
	return b.String()
}

func referenceDefault(k Key) string {
	switch {
	case k.NoDefault:
		return "*(none)*"
	case k.Sensitive:
		return "*(hidden)*"
	case k.Default == "":
		return `""`
	}
	return "`" + k.Default + "`"
}

// referenceCell makes text safe inside a Markdown table cell.
func referenceCell(text string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(text)
}
