package diffcheck

import (
	"fmt"
	"reflect"
	"strings"
)

// allowListed are the response fields that differ between any two
// clusters, by kmsg field name, with the reason printed in the table's
// notes. Compare checks only their nullness (pointers) or emptiness
// (strings, byte slices), never their values.
var allowListed = map[string]string{
	"ThrottleMillis":         "throttle times depend on load",
	"ClusterID":              "each cluster formats its own id",
	"TopicID":                "topic ids are random",
	"Host":                   "listener addresses",
	"Port":                   "listener addresses",
	"Dir":                    "log directory paths",
	"MemberID":               "member ids are generated",
	"LeaderID":               "member ids are generated",
	"SessionID":              "fetch session ids are random",
	"LogAppendTime":          "timestamps",
	"Timestamp":              "timestamps",
	"FinalizedFeaturesEpoch": "the metadata offset of the last feature change",
	"Records":                "record batches carry timestamps and CRCs; presence is compared",
	"IncarnationID":          "random per process",
	"ProducerID":             "producer id blocks are allocated per cluster",
	"LastFetchTimestamp":     "timestamps",
	"LastCaughtUpTimestamp":  "timestamps",
	"UsableBytes":            "free disk space moves between the two answers",
}

// allowListedPerAPI are fields that must differ in one API's answers only.
var allowListedPerAPI = map[int16]map[string]string{
	// The metadata logs hold different records (Kafka appends a NoOp
	// record every metadata.max.idle.interval.ms), so their offsets differ.
	55: {"HighWatermark": "metadata log offsets", "LogEndOffset": "metadata log offsets"},
}

// ignoredFields are never compared: kmsg bookkeeping, and the ApiVersions
// key list, which the table reports as the versions each side advertises.
var ignoredFields = map[string]bool{
	"UnknownTags": true,
	"ApiKeys":     true,
	// Error messages are free text; the codes are compared. Kafka sends
	// null or "" where Samsa sends a sentence, and the other way round.
	"ErrorMessage": true,
}

// Compare lists the differences between Kafka's and Samsa's responses to
// API key, as "path: kafka=X samsa=Y" lines.
func Compare(key int16, kafka, samsa any) []string {
	var out []string
	c := comparison{perAPI: allowListedPerAPI[key], out: &out}
	c.values("", reflect.ValueOf(kafka), reflect.ValueOf(samsa), false)
	return out
}

// comparison is one Compare call.
type comparison struct {
	perAPI map[string]string
	out    *[]string
}

// compareValues appends the differences of a and b under path. Under
// presenceOnly (an allow-listed field) only nullness and emptiness count.
func (c comparison) values(path string, a, b reflect.Value, presenceOnly bool) {
	out := c.out
	if a.IsValid() != b.IsValid() {
		*out = append(*out, fmt.Sprintf("%s: kafka=%s samsa=%s", path, describe(a), describe(b)))
		return
	}
	if !a.IsValid() {
		return
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() != b.IsNil() {
			*out = append(*out, fmt.Sprintf("%s: kafka=%s samsa=%s", path, describe(a), describe(b)))
			return
		}
		if !a.IsNil() {
			c.values(path, a.Elem(), b.Elem(), presenceOnly)
		}
	case reflect.Struct:
		for i := range a.NumField() {
			field := a.Type().Field(i)
			if !field.IsExported() || ignoredFields[field.Name] {
				continue
			}
			_, allowed := allowListed[field.Name]
			_, allowedHere := c.perAPI[field.Name]
			c.values(join(path, field.Name), a.Field(i), b.Field(i), presenceOnly || allowed || allowedHere)
		}
	case reflect.Slice:
		if a.Type().Elem().Kind() == reflect.Uint8 {
			if (a.Len() == 0) != (b.Len() == 0) || (!presenceOnly && string(a.Bytes()) != string(b.Bytes())) {
				*out = append(*out, fmt.Sprintf("%s: kafka=%d bytes samsa=%d bytes", path, a.Len(), b.Len()))
			}
			return
		}
		if key := sortKeyOf(a.Type().Elem()); key != "" && key != "Partition" {
			c.keyed(path, key, a, b, presenceOnly)
			return
		}
		if a.Len() != b.Len() {
			*out = append(*out, fmt.Sprintf("%s: kafka=%d entries samsa=%d entries%s", path, a.Len(), b.Len(), namesHint(a, b)))
		}
		for i := range min(a.Len(), b.Len()) {
			c.values(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i), presenceOnly)
		}
	case reflect.Map:
		if a.Len() != b.Len() {
			*out = append(*out, fmt.Sprintf("%s: kafka=%d entries samsa=%d entries", path, a.Len(), b.Len()))
		}
	case reflect.String:
		if presenceOnly {
			if (a.Len() == 0) != (b.Len() == 0) {
				*out = append(*out, fmt.Sprintf("%s: kafka=%q samsa=%q", path, a.String(), b.String()))
			}
			return
		}
		if a.String() != b.String() {
			*out = append(*out, fmt.Sprintf("%s: kafka=%q samsa=%q", path, a.String(), b.String()))
		}
	default:
		if presenceOnly {
			return
		}
		if !a.Equal(b) {
			*out = append(*out, fmt.Sprintf("%s: kafka=%v samsa=%v%s", path, a.Interface(), b.Interface(), errorName(path, a, b)))
		}
	}
}

// compareKeyed matches the entries of two lists by their key field (a
// topic or config name) and compares the pairs; entries only one side
// has are named.
func (c comparison) keyed(path, key string, a, b reflect.Value, presenceOnly bool) {
	out := c.out
	index := func(v reflect.Value) (map[string]reflect.Value, []string) {
		entries := map[string]reflect.Value{}
		var order []string
		for i := range v.Len() {
			k := displayKey(v.Index(i), key)
			if _, dup := entries[k]; !dup {
				order = append(order, k)
			}
			entries[k] = v.Index(i)
		}
		return entries, order
	}
	inKafka, kafkaOrder := index(a)
	inSamsa, samsaOrder := index(b)
	var onlyKafka, onlySamsa []string
	for _, k := range kafkaOrder {
		if _, ok := inSamsa[k]; !ok {
			onlyKafka = append(onlyKafka, k)
		}
	}
	for _, k := range samsaOrder {
		if _, ok := inKafka[k]; !ok {
			onlySamsa = append(onlySamsa, k)
		}
	}
	if len(onlyKafka) > 0 || len(onlySamsa) > 0 {
		*out = append(*out, fmt.Sprintf("%s: only in Kafka: %s; only in Samsa: %s", path, limitList(onlyKafka), limitList(onlySamsa)))
	}
	for _, k := range kafkaOrder {
		if other, ok := inSamsa[k]; ok {
			c.values(fmt.Sprintf("%s[%s]", path, k), inKafka[k], other, presenceOnly)
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func describe(v reflect.Value) string {
	if !v.IsValid() || ((v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil()) {
		return "null"
	}
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		return "set"
	}
	return fmt.Sprintf("%v", v.Interface())
}

// errorName adds the names of two differing error codes.
func errorName(path string, a, b reflect.Value) string {
	if !strings.HasSuffix(path, "ErrorCode") || a.Kind() != reflect.Int16 {
		return ""
	}
	return fmt.Sprintf(" (%s vs %s)", errorCodeName(int16(a.Int())), errorCodeName(int16(b.Int())))
}

// namesHint names the entries only one side has, for slices of structs
// with a Name or Topic field (configs, topics).
func namesHint(a, b reflect.Value) string {
	names := func(v reflect.Value) map[string]bool {
		set := map[string]bool{}
		for i := range v.Len() {
			element := v.Index(i)
			if element.Kind() == reflect.Pointer {
				element = element.Elem()
			}
			if element.Kind() != reflect.Struct {
				return nil
			}
			for _, field := range []string{"Name", "Topic", "Key"} {
				if f := element.FieldByName(field); f.IsValid() {
					if f.Kind() == reflect.Pointer && !f.IsNil() {
						f = f.Elem()
					}
					if f.Kind() == reflect.String {
						set[f.String()] = true
					}
					break
				}
			}
		}
		return set
	}
	inKafka, inSamsa := names(a), names(b)
	if len(inKafka) == 0 && len(inSamsa) == 0 {
		return ""
	}
	var onlyKafka, onlySamsa []string
	for name := range inKafka {
		if !inSamsa[name] {
			onlyKafka = append(onlyKafka, name)
		}
	}
	for name := range inSamsa {
		if !inKafka[name] {
			onlySamsa = append(onlySamsa, name)
		}
	}
	sortStrings(onlyKafka)
	sortStrings(onlySamsa)
	return fmt.Sprintf(" (only in Kafka: %s; only in Samsa: %s)", limitList(onlyKafka), limitList(onlySamsa))
}
