package config

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's ConfigDef.Type values, as carried in DescribeConfigs responses.
const (
	typeBoolean  = kmsg.ConfigTypeBoolean
	typeString   = kmsg.ConfigTypeString
	typeInt      = kmsg.ConfigTypeInt
	typeShort    = kmsg.ConfigTypeShort
	typeLong     = kmsg.ConfigTypeLong
	typeDouble   = kmsg.ConfigTypeDouble
	typeList     = kmsg.ConfigTypeList
	typePassword = kmsg.ConfigTypePassword
	typeClass    = kmsg.ConfigTypeClass
)

// Validator checks a value already normalized by its key's type and returns
// the reason it is invalid, or "" when it is valid.
type Validator func(value string) string

// listSeparator is ConfigDef's COMMA_WITH_WHITESPACE.
var listSeparator = regexp.MustCompile(`\s*,\s*`)

// normalize parses raw as a value of type t, the way Kafka's ConfigDef.parseType
// does, and renders it back in Kafka's canonical string form (ConfigDef.
// convertToString): "TRUE" becomes "true", "+5" becomes "5", "a , b" becomes
// "a,b". It returns the reason when raw is not a value of type t.
func normalize(t kmsg.ConfigType, raw string) (string, string) {
	trimmed := strings.TrimSpace(raw)
	switch t {
	case typeBoolean:
		switch strings.ToLower(trimmed) {
		case "true":
			return "true", ""
		case "false":
			return "false", ""
		}
		return "", "Expected value to be either true or false"
	case typeInt, typeShort, typeLong:
		bits, name := 32, "INT"
		if t == typeShort {
			bits, name = 16, "SHORT"
		} else if t == typeLong {
			bits, name = 64, "LONG"
		}
		n, err := strconv.ParseInt(trimmed, 10, bits)
		if err != nil {
			return "", "Not a number of type " + name
		}
		return strconv.FormatInt(n, 10), ""
	case typeDouble:
		f, err := strconv.ParseFloat(trimmed, 64)
		if err != nil || strings.ContainsAny(trimmed, "xX_") {
			return "", "Not a number of type DOUBLE"
		}
		return javaDouble(f), ""
	case typeList:
		if trimmed == "" {
			return "", ""
		}
		return strings.Join(splitList(trimmed), ","), ""
	case typePassword:
		return raw, ""
	default:
		return trimmed, ""
	}
}

// splitList splits a normalized LIST value; the empty string is the empty list.
func splitList(value string) []string {
	if value == "" {
		return nil
	}
	return listSeparator.Split(strings.TrimSpace(value), -1)
}

// javaDouble renders f the way Java's Double.toString does, so DOUBLE values
// described to clients look the same as Apache Kafka's ("0.5", "1.0E7").
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if abs := math.Abs(f); abs == 0 || (abs >= 1e-3 && abs < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mantissa, exponent, _ := strings.Cut(s, "e")
	if !strings.Contains(mantissa, ".") {
		mantissa += ".0"
	}
	sign := ""
	if strings.HasPrefix(exponent, "-") {
		sign = "-"
	}
	// Go pads the exponent to two digits; Java does not.
	exponent = strings.TrimLeft(exponent, "+-0")
	return mantissa + "E" + sign + exponent
}

// atLeast is Kafka's Range.atLeast for INT, SHORT and LONG keys.
func atLeast(min int64) Validator {
	return func(value string) string {
		n, err := strconv.ParseInt(value, 10, 64)
		if err == nil && n < min {
			return fmt.Sprintf("Value must be at least %d", min)
		}
		return ""
	}
}

// between is Kafka's Range.between for INT, SHORT and LONG keys.
func between(min, max int64) Validator {
	return func(value string) string {
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return ""
		}
		if n < min {
			return fmt.Sprintf("Value must be at least %d", min)
		}
		if n > max {
			return fmt.Sprintf("Value must be no more than %d", max)
		}
		return ""
	}
}

// betweenDouble is Kafka's Range.between for DOUBLE keys.
func betweenDouble(min, max float64) Validator {
	return func(value string) string {
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return ""
		}
		if f < min {
			return "Value must be at least " + javaDouble(min)
		}
		if f > max {
			return "Value must be no more than " + javaDouble(max)
		}
		return ""
	}
}

// oneOf is Kafka's ValidString.in: the value must be one of the choices,
// compared exactly.
func oneOf(choices ...string) Validator {
	return func(value string) string {
		for _, c := range choices {
			if value == c {
				return ""
			}
		}
		return "String must be one of: " + strings.Join(choices, ", ")
	}
}

// listOf is Kafka's ValidList.in: every element must be one of the choices.
// The empty list is allowed, as in Kafka 4.0; an empty element is not.
// Kafka names the offending element, not the whole list, in its message, so
// the reason is an elementReason.
func listOf(choices ...string) Validator {
	return func(value string) string {
		if value == "" {
			return ""
		}
		for _, element := range listSeparator.Split(strings.TrimSpace(value), -1) {
			if element == "" {
				return wholeMessageReason("Configuration '%s' values must not be empty.")
			}
			if reason := oneOf(choices...)(element); reason != "" {
				return elementReason(element, reason)
			}
		}
		return ""
	}
}

// reasonMarker starts a reason that is not about the value as a whole: an
// element of a list (elementReason) or a message of its own
// (wholeMessageReason). Key.validate unpacks it.
const reasonMarker = "\x00"

// elementReason is the reason a list is invalid because of one element:
// Kafka's message shows that element as the invalid value.
func elementReason(element, reason string) string {
	return reasonMarker + "element" + reasonMarker + element + reasonMarker + reason
}

// wholeMessageReason is a complete message, with %s standing for the key's
// name, instead of "Invalid value ... for configuration ...: reason".
func wholeMessageReason(format string) string {
	return reasonMarker + "message" + reasonMarker + format
}

// unpackReason splits a reason made by elementReason or wholeMessageReason.
// For a plain reason it returns (shown, reason, "").
func unpackReason(shown, reason string) (value, why, message string) {
	if !strings.HasPrefix(reason, reasonMarker) {
		return shown, reason, ""
	}
	parts := strings.SplitN(reason[len(reasonMarker):], reasonMarker, 3)
	switch {
	case parts[0] == "element" && len(parts) == 3:
		return parts[1], parts[2], ""
	case parts[0] == "message" && len(parts) == 2:
		return shown, "", parts[1]
	}
	return shown, reason, ""
}

// nonEmptyList rejects the empty list and empty or duplicated elements.
func nonEmptyList(value string) string {
	elements := splitList(value)
	if len(elements) == 0 {
		return "Empty list is not allowed"
	}
	seen := make(map[string]bool, len(elements))
	for _, element := range elements {
		if element == "" {
			return "Empty elements are not allowed"
		}
		if seen[element] {
			return "Duplicate element " + element + " is not allowed"
		}
		seen[element] = true
	}
	return ""
}

// allOf combines validators, reporting the first failure.
func allOf(validators ...Validator) Validator {
	return func(value string) string {
		for _, v := range validators {
			if reason := v(value); reason != "" {
				return reason
			}
		}
		return ""
	}
}

// gzipLevel is Kafka's GzipCompression.LevelValidator: -1 (zlib's default)
// or 1 through 9.
func gzipLevel(value string) string {
	n, err := strconv.ParseInt(value, 10, 64)
	if err == nil && n != -1 && (n < 1 || n > 9) {
		return "Value must be between 1 and 9, or -1 for the default level"
	}
	return ""
}

// throttledReplicas is Kafka's ThrottledReplicaListValidator: either "*" or a
// list of partitionId:brokerId pairs.
var throttledReplicaPattern = regexp.MustCompile(`^[0-9]+:[0-9]+$`)

func throttledReplicas(value string) string {
	elements := splitList(value)
	if len(elements) == 1 && elements[0] == "*" {
		return ""
	}
	for _, element := range elements {
		if !throttledReplicaPattern.MatchString(element) {
			return "Must be the wildcard (*) or of the form partitionId:brokerId, separated by commas"
		}
	}
	return ""
}

// hostPort checks "host:port" with a port in 0..65535.
func hostPort(value string) string {
	if value == "" {
		return ""
	}
	if _, _, err := splitHostPort(value); err != "" {
		return err
	}
	return ""
}

// compressionTypes are Kafka's BrokerCompressionType names.
var compressionTypes = []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}

// intMax and longMax are Java's Integer.MAX_VALUE and Long.MAX_VALUE.
const (
	intMax  = "2147483647"
	longMax = "9223372036854775807"
)
