package console

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A filter is a CEL expression, evaluated on the server, that keeps a
// record when it is true. It sees:
//
//	key, value   string (the bytes, invalid UTF-8 replaced)
//	json         the value parsed as JSON, or null when it is not JSON
//	headers      map(string, string), the last value of each header key
//	partition    int
//	offset       int
//	timestamp    int, milliseconds since the epoch
//
// for example value.contains("error") && json.level == "warn", or
// offset % 2 == 0. Evaluation is bounded by filterCostMax, so no
// expression can spin the node.
type filter struct {
	program cel.Program
}

// filterCostMax bounds the work of one evaluation (CEL's cost units).
const filterCostMax = 1_000_000

var filterEnvironment, filterEnvironmentErr = cel.NewEnv(
	cel.Variable("key", cel.StringType),
	cel.Variable("value", cel.StringType),
	cel.Variable("json", cel.DynType),
	cel.Variable("headers", cel.MapType(cel.StringType, cel.StringType)),
	cel.Variable("partition", cel.IntType),
	cel.Variable("offset", cel.IntType),
	cel.Variable("timestamp", cel.IntType),
)

// compileFilter compiles expression; an empty one keeps every record.
func compileFilter(expression string) (*filter, error) {
	if expression == "" {
		return nil, nil
	}
	if filterEnvironmentErr != nil {
		return nil, filterEnvironmentErr
	}
	ast, issues := filterEnvironment.Compile(expression)
	if issues != nil && issues.Err() != nil {
		return nil, fmt.Errorf("%w: %w", errFilter, issues.Err())
	}
	if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
		return nil, fmt.Errorf("%w: the expression is a %s, expected a bool", errFilter, ast.OutputType())
	}
	program, err := filterEnvironment.Program(ast, cel.CostLimit(filterCostMax), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errFilter, err)
	}
	return &filter{program: program}, nil
}

// keep evaluates the filter on a record. A runtime error (a missing JSON
// field, a wrong type) drops the record rather than failing the scan; the
// first such error is reported with the page.
func (f *filter) keep(ctx context.Context, record *kgo.Record) (bool, error) {
	if f == nil {
		return true, nil
	}
	headers := make(map[string]string, len(record.Headers))
	for _, h := range record.Headers {
		headers[h.Key] = toText(h.Value)
	}
	var parsed any
	if json.Valid(record.Value) {
		_ = json.Unmarshal(record.Value, &parsed)
	}
	out, _, err := f.program.ContextEval(ctx, map[string]any{
		"key":       toText(record.Key),
		"value":     toText(record.Value),
		"json":      parsed,
		"headers":   headers,
		"partition": int64(record.Partition),
		"offset":    record.Offset,
		"timestamp": record.Timestamp.UnixMilli(),
	})
	if err != nil {
		return false, err
	}
	keep, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("filter: the expression gave %v, expected a bool", out.Value())
	}
	return keep, nil
}

// toText is bytes as a string with invalid UTF-8 replaced.
func toText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string([]rune(string(b)))
}
