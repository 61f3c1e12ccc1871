package config

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterOp is one config of an IncrementalAlterConfigs resource.
type AlterOp struct {
	Name string
	// Op is SET (0), DELETE (1), APPEND (2) or SUBTRACT (3).
	Op    kmsg.IncrementalAlterConfigOp
	Value *string
}

// ApplyIncremental applies IncrementalAlterConfigs operations to the current
// overrides of a topic or broker resource and returns the new overrides;
// current is not modified. It follows Kafka's rules:
//
//   - SET replaces the value; DELETE removes the override, reverting to the
//     default.
//   - APPEND and SUBTRACT work only on LIST keys. APPEND adds the elements
//     not already present to the current value (the default if there is no
//     override); SUBTRACT removes them.
//   - A key may appear once per resource, and only DELETE may have a null
//     value (ErrInvalidRequest).
//
// Keys and values are not validated here: pass the result to
// ValidateTopicConfigs or Broker.WithDynamic. Unknown keys are not LIST keys.
func ApplyIncremental(current map[string]string, ops []AlterOp) (map[string]string, error) {
	return ApplyIncrementalFor(current, ops, func(name string) (string, bool) {
		k, ok := lookupAny(name)
		return k.Default, ok && k.Type == typeList
	})
}

// ApplyIncrementalFor is ApplyIncremental for a resource type with keys of
// its own (client-metrics subscriptions): listDefault reports whether name
// is a LIST key, and its default.
func ApplyIncrementalFor(current map[string]string, ops []AlterOp, listDefault func(name string) (string, bool)) (map[string]string, error) {
	seen := make(map[string]bool, len(ops))
	for _, op := range ops {
		if seen[op.Name] {
			return nil, &Error{Kind: ErrInvalidRequest, Key: op.Name, Message: "Error due to duplicate config keys"}
		}
		seen[op.Name] = true
		if op.Op != kmsg.IncrementalAlterConfigOpDelete && op.Value == nil {
			return nil, &Error{Kind: ErrInvalidRequest, Key: op.Name, Message: "Null value not supported for : " + op.Name}
		}
	}

	out := make(map[string]string, len(current)+len(ops))
	for k, v := range current {
		out[k] = v
	}
	for _, op := range ops {
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			out[op.Name] = *op.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(out, op.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			listDefaultValue, ok := listDefault(op.Name)
			if !ok {
				return nil, &Error{Kind: ErrInvalidValue, Key: op.Name, Message: fmt.Sprintf(
					"Can't %s to key %s because its type is not LIST.", op.Op, op.Name)}
			}
			base, overridden := out[op.Name]
			if !overridden {
				base = listDefaultValue
			}
			elements := nonEmpty(strings.Split(base, ","))
			for _, element := range strings.Split(*op.Value, ",") {
				if op.Op == kmsg.IncrementalAlterConfigOpAppend {
					if !contains(elements, element) {
						elements = append(elements, element)
					}
				} else {
					elements = remove(elements, element)
				}
			}
			out[op.Name] = strings.Join(elements, ",")
		default:
			return nil, &Error{Kind: ErrInvalidRequest, Key: op.Name, Message: fmt.Sprintf("Unknown operations type %d", int8(op.Op))}
		}
	}
	return out, nil
}

// lookupAny finds name among the topic keys, then the broker keys; no name
// is in both with different types.
func lookupAny(name string) (Key, bool) {
	if k, ok := LookupTopic(name); ok {
		return k, true
	}
	return LookupBroker(name)
}

func nonEmpty(elements []string) []string {
	out := elements[:0]
	for _, e := range elements {
		if e != "" {
			out = append(out, e)
		}
	}
	return out
}

// remove deletes the first occurrence of element, as Java's List.remove.
func remove(elements []string, element string) []string {
	for i, e := range elements {
		if e == element {
			return append(elements[:i], elements[i+1:]...)
		}
	}
	return elements
}
