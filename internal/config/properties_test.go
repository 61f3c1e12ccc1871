package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name string
		text string
		want map[string]string
	}{
		{"equals", "a=1\nb = 2\n", map[string]string{"a": "1", "b": "2"}},
		{"colon", "a:1\nb : 2", map[string]string{"a": "1", "b": "2"}},
		{"whitespace separator", "a 1\nb\t\t2", map[string]string{"a": "1", "b": "2"}},
		{"whitespace then separator", "a  =  1", map[string]string{"a": "1"}},
		{"second separator is value", "a==1\nb=:2", map[string]string{"a": "=1", "b": ":2"}},
		{"comments", "# a=1\n! b=2\n   # c=3\nd=4", map[string]string{"d": "4"}},
		{"comment mid-line is content", "a=1 # not a comment", map[string]string{"a": "1 # not a comment"}},
		{"blank lines", "\n\n  \t\na=1\n\n", map[string]string{"a": "1"}},
		{"key only", "a\nb=", map[string]string{"a": "", "b": ""}},
		{"continuation", "a=1,\\\n    2,\\\n\t3\nb=4", map[string]string{"a": "1,2,3", "b": "4"}},
		{"continuation line starting with hash", "a=x\\\n#y", map[string]string{"a": "x#y"}},
		{"comment does not continue", "# c \\\na=1", map[string]string{"a": "1"}},
		{"even backslashes do not continue", "a=x\\\\\nb=2", map[string]string{"a": `x\`, "b": "2"}},
		{"continuation at end of file", "a=x\\", map[string]string{"a": "x"}},
		{"blank continuation ends value", "a=x\\\n\nb=2", map[string]string{"a": "x", "b": "2"}},
		{"escapes", `a=tab\there\nnl\rcr\fff`, map[string]string{"a": "tab\there\nnl\rcr\fff"}},
		{"escaped separators in key", `a\=b\:c\ d=1`, map[string]string{"a=b:c d": "1"}},
		{"backslash before other char", `path=C:\\data\\x \q`, map[string]string{"path": `C:\data\x q`}},
		{"unicode escape", `a=caf\u00e9`, map[string]string{"a": "café"}},
		{"surrogate pair", `a=\ud83d\ude00`, map[string]string{"a": "😀"}},
		{"utf8 passes through", "a=日本", map[string]string{"a": "日本"}},
		{"crlf and cr", "a=1\r\nb=2\rc=3", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"last duplicate wins", "a=1\na=2", map[string]string{"a": "2"}},
		{"leading whitespace on key", "   a=1", map[string]string{"a": "1"}},
		{"trailing whitespace kept until trim", "a=1  ", map[string]string{"a": "1  "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			properties, err := parseProperties(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			got := make(map[string]string)
			for _, p := range properties {
				got[p.key] = p.value
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParsePropertiesLineNumbers(t *testing.T) {
	properties, err := parseProperties("# header\n\na=1,\\\n 2\nb=3\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(properties) != 2 || properties[0].line != 3 || properties[1].line != 5 {
		t.Errorf("got %+v, want a on line 3 and b on line 5", properties)
	}
}

func TestParsePropertiesMalformedUnicode(t *testing.T) {
	for _, text := range []string{`a=\u12`, `a=\uzzzz`, `\u00=1`} {
		if _, err := parseProperties(text); err == nil || !strings.Contains(err.Error(), "malformed") {
			t.Errorf("%q: got %v, want a malformed \\uxxxx error", text, err)
		}
	}
}

// escapeProperty writes s so that parseProperties reads it back unchanged.
func escapeProperty(s string, isKey bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\' || r == '=' || r == ':' || r == '#' || r == '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == ' ' && (isKey || i == 0):
			b.WriteString(`\ `)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func FuzzParseProperties(f *testing.F) {
	f.Add("a=1\n# c\nb : 2\\\n  3\n", "key", "value")
	f.Add(`x\u0041=\ud83d\ude00`, "k y", " v=:#")
	f.Fuzz(func(t *testing.T, text, key, value string) {
		// Any input either parses or fails cleanly.
		_, _ = parseProperties(text)

		// A key and value written with escapes read back unchanged.
		if key == "" || !isValidUTF8(key) || !isValidUTF8(value) {
			return
		}
		line := escapeProperty(key, true) + "=" + escapeProperty(value, false)
		properties, err := parseProperties(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if len(properties) != 1 || properties[0].key != key || properties[0].value != value {
			t.Fatalf("%q: got %+v, want %q=%q", line, properties, key, value)
		}
	})
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
