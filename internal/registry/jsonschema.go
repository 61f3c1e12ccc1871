package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonSchema is a JSON Schema validated (compiled) by santhosh-tekuri's
// jsonschema, with its document kept for the compatibility rules.
type jsonSchema struct {
	text     string
	document any
}

// jsonRootURL is where the registered schema is placed so relative $refs
// resolve against references named by relative paths.
const jsonRootURL = "mem://schema/root.json"

// refuseLoader refuses every URL that is not a reference: a schema must not
// make the registry read files or fetch URLs.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref %q is not a reference of this schema", url)
}

func parseJSONSchema(text string, dependencies []dependency) (parsedSchema, error) {
	compact, err := compactJSON(text)
	if err != nil {
		return nil, err
	}
	document, err := jsonschema.UnmarshalJSON(strings.NewReader(compact))
	if err != nil {
		return nil, err
	}
	switch document.(type) {
	case map[string]any, bool:
	default:
		return nil, errors.New("a JSON Schema is an object or a boolean")
	}
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft7)
	compiler.UseLoader(refuseLoader{})
	for _, dep := range dependencies {
		if dep.SchemaType != typeJSON {
			continue
		}
		depDocument, err := jsonschema.UnmarshalJSON(strings.NewReader(dep.Schema))
		if err != nil {
			return nil, fmt.Errorf("reference %s: %v", dep.Name, err)
		}
		url := dep.Name
		if !strings.Contains(url, "://") {
			url = "mem://schema/" + strings.TrimPrefix(url, "/")
		}
		if err := compiler.AddResource(url, depDocument); err != nil {
			return nil, fmt.Errorf("reference %s: %v", dep.Name, err)
		}
	}
	if err := compiler.AddResource(jsonRootURL, document); err != nil {
		return nil, err
	}
	if _, err := compiler.Compile(jsonRootURL); err != nil {
		return nil, err
	}
	return &jsonSchema{text: compact, document: document}, nil
}

func (s *jsonSchema) canonical() string { return s.text }

func (s *jsonSchema) readIssues(writer parsedSchema) []string {
	old, ok := writer.(*jsonSchema)
	if !ok {
		return []string{"schema type changed"}
	}
	var issues []string
	jsonReadIssues("#", s.document, old.document, &issues)
	return issues
}

// jsonReadIssues applies Confluent's JSON Schema change rules to one
// schema position: can reader accept every document writer accepts? The
// change names are Confluent's.
func jsonReadIssues(path string, reader, writer any, issues *[]string) {
	add := func(kind string) { *issues = append(*issues, kind+" at "+path) }
	readerObject, readerIsObject := asSchemaObject(reader)
	writerObject, writerIsObject := asSchemaObject(writer)
	if !readerIsObject {
		if reader == false && writer != false {
			add("TYPE_NARROWED")
		}
		return
	}
	if !writerIsObject {
		if writer == true && len(readerObject) > 0 {
			add("SCHEMA_ADDED")
		}
		return
	}
	readerTypes, writerTypes := jsonTypes(readerObject), jsonTypes(writerObject)
	if readerTypes != nil {
		if writerTypes == nil {
			add("TYPE_NARROWED")
		} else {
			for _, t := range writerTypes {
				if !slices.Contains(readerTypes, t) && !(t == "integer" && slices.Contains(readerTypes, "number")) {
					add("TYPE_CHANGED")
					break
				}
			}
		}
	}
	jsonBoundIssues(path, readerObject, writerObject, issues)
	jsonEnumIssues(path, readerObject, writerObject, issues)

	// Objects.
	readerProperties, _ := readerObject["properties"].(map[string]any)
	writerProperties, _ := writerObject["properties"].(map[string]any)
	readerOpen := readerObject["additionalProperties"] != false
	writerOpen := writerObject["additionalProperties"] != false
	if !readerOpen && writerOpen {
		add("ADDITIONAL_PROPERTIES_REMOVED")
	}
	for _, name := range sortedKeys(writerProperties) {
		readerProperty, ok := readerProperties[name]
		if !ok {
			if !readerOpen {
				add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL")
			}
			continue
		}
		jsonReadIssues(path+"/properties/"+name, readerProperty, writerProperties[name], issues)
	}
	for _, name := range sortedKeys(readerProperties) {
		if _, ok := writerProperties[name]; ok {
			continue
		}
		if writerOpen && !isEmptySchema(readerProperties[name]) {
			add("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")
		}
	}
	writerRequired := stringList(writerObject["required"])
	for _, name := range stringList(readerObject["required"]) {
		if !slices.Contains(writerRequired, name) {
			property, _ := readerProperties[name].(map[string]any)
			if _, hasDefault := property["default"]; !hasDefault {
				add("REQUIRED_ATTRIBUTE_ADDED")
			}
		}
	}

	// Arrays.
	if readerItems, ok := readerObject["items"]; ok {
		if writerItems, ok := writerObject["items"]; ok {
			jsonReadIssues(path+"/items", readerItems, writerItems, issues)
		} else if !isEmptySchema(readerItems) {
			add("ITEMS_ADDED")
		}
	}
}

// jsonBoundIssues: a reader with a tighter bound rejects data the writer
// accepted.
func jsonBoundIssues(path string, reader, writer map[string]any, issues *[]string) {
	for _, bound := range []struct {
		name  string
		upper bool
	}{
		{"maxLength", true}, {"minLength", false}, {"maximum", true}, {"minimum", false},
		{"exclusiveMaximum", true}, {"exclusiveMinimum", false}, {"maxItems", true}, {"minItems", false},
		{"maxProperties", true}, {"minProperties", false},
	} {
		readerValue, readerHas := jsonNumber(reader[bound.name])
		writerValue, writerHas := jsonNumber(writer[bound.name])
		switch {
		case readerHas && !writerHas:
			*issues = append(*issues, strings.ToUpper(camelToSnake(bound.name))+"_ADDED at "+path)
		case readerHas && bound.upper && readerValue < writerValue:
			*issues = append(*issues, strings.ToUpper(camelToSnake(bound.name))+"_DECREASED at "+path)
		case readerHas && !bound.upper && readerValue > writerValue:
			*issues = append(*issues, strings.ToUpper(camelToSnake(bound.name))+"_INCREASED at "+path)
		}
	}
	if readerPattern, ok := reader["pattern"].(string); ok && readerPattern != writer["pattern"] {
		*issues = append(*issues, "PATTERN_CHANGED at "+path)
	}
}

func jsonEnumIssues(path string, reader, writer map[string]any, issues *[]string) {
	readerEnum, readerHas := reader["enum"].([]any)
	if !readerHas {
		return
	}
	writerEnum, writerHas := writer["enum"].([]any)
	if !writerHas {
		*issues = append(*issues, "ENUM_ARRAY_NARROWED at "+path)
		return
	}
	for _, value := range writerEnum {
		found := false
		for _, candidate := range readerEnum {
			if fmt.Sprint(candidate) == fmt.Sprint(value) {
				found = true
				break
			}
		}
		if !found {
			*issues = append(*issues, "ENUM_ARRAY_NARROWED at "+path)
			return
		}
	}
}

// jsonNumber reads a number the jsonschema decoder produced (json.Number)
// or encoding/json did (float64).
func jsonNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

func asSchemaObject(v any) (map[string]any, bool) {
	object, ok := v.(map[string]any)
	return object, ok
}

func isEmptySchema(v any) bool {
	if v == true {
		return true
	}
	object, ok := v.(map[string]any)
	return ok && len(object) == 0
}

func jsonTypes(object map[string]any) []string {
	switch t := object["type"].(type) {
	case string:
		return []string{t}
	case []any:
		return stringList(t)
	}
	return nil
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, item := range list {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func camelToSnake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
