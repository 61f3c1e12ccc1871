package config

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// property is one key=value pair read from a server.properties file.
type property struct {
	key   string
	value string
	line  int // the natural line on which the logical line started, from 1
}

// maxPropertiesBytes bounds the size of a properties file; a broker config
// file is a few kilobytes, so anything this large is a mistake.
const maxPropertiesBytes = 16 << 20

// parseProperties reads text in java.util.Properties format. Later duplicates
// of a key replace earlier ones when the caller applies them in order. See the
// package documentation for the syntax.
func parseProperties(text string) ([]property, error) {
	if len(text) > maxPropertiesBytes {
		return nil, fmt.Errorf("config: properties file is %d bytes, more than the %d allowed", len(text), maxPropertiesBytes)
	}
	lines := splitNaturalLines(text)
	var properties []property
	for i := 0; i < len(lines); i++ {
		start := i
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		var logical strings.Builder
		for {
			continued := trailingBackslashes(line)%2 == 1
			if continued {
				line = line[:len(line)-1]
			}
			logical.WriteString(line)
			if !continued || i+1 == len(lines) {
				break
			}
			i++
			// Leading whitespace of a continuation line is not part of
			// the value, and a '#' there is content, not a comment.
			line = strings.TrimLeft(lines[i], " \t\f")
		}
		key, value, err := splitKeyValue(logical.String())
		if err != nil {
			return nil, fmt.Errorf("config: line %d: %w", start+1, err)
		}
		properties = append(properties, property{key: key, value: value, line: start + 1})
	}
	return properties, nil
}

// splitNaturalLines splits on "\n", "\r\n" and "\r", as Properties.load does.
func splitNaturalLines(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	return strings.Split(text, "\n")
}

func trailingBackslashes(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

func isPropertiesSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// splitKeyValue splits a logical line: the key runs to the first unescaped
// '=', ':' or whitespace; then whitespace, at most one '=' or ':', and more
// whitespace are skipped; the rest is the value.
func splitKeyValue(line string) (string, string, error) {
	keyEnd, valueStart := len(line), len(line)
	hasSeparator, escaped := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if !escaped && (c == '=' || c == ':') {
			keyEnd, valueStart, hasSeparator = i, i+1, true
			break
		}
		if !escaped && isPropertiesSpace(c) {
			keyEnd, valueStart = i, i+1
			break
		}
		escaped = c == '\\' && !escaped
	}
	for valueStart < len(line) {
		c := line[valueStart]
		if !isPropertiesSpace(c) {
			if hasSeparator || (c != '=' && c != ':') {
				break
			}
			hasSeparator = true
		}
		valueStart++
	}
	key, err := unescapeProperties(line[:keyEnd])
	if err != nil {
		return "", "", err
	}
	value, err := unescapeProperties(line[valueStart:])
	if err != nil {
		return "", "", err
	}
	return key, value, nil
}

// unescapeProperties resolves \t \n \r \f, \uXXXX (with UTF-16 surrogate
// pairs) and drops the backslash before any other character.
func unescapeProperties(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var out strings.Builder
	var pendingHigh rune = -1
	flushHigh := func() {
		if pendingHigh >= 0 {
			out.WriteRune(utf8.RuneError)
			pendingHigh = -1
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			flushHigh()
			out.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			break
		}
		switch s[i] {
		case 't':
			flushHigh()
			out.WriteByte('\t')
		case 'n':
			flushHigh()
			out.WriteByte('\n')
		case 'r':
			flushHigh()
			out.WriteByte('\r')
		case 'f':
			flushHigh()
			out.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf(`malformed \uxxxx encoding in %q`, s)
			}
			code, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf(`malformed \uxxxx encoding in %q`, s)
			}
			i += 4
			r := rune(code)
			switch {
			case utf16.IsSurrogate(r) && r < 0xDC00:
				flushHigh()
				pendingHigh = r
			case utf16.IsSurrogate(r) && pendingHigh >= 0:
				out.WriteRune(utf16.DecodeRune(pendingHigh, r))
				pendingHigh = -1
			default:
				flushHigh()
				out.WriteRune(r)
			}
		default:
			flushHigh()
			out.WriteByte(s[i])
		}
	}
	flushHigh()
	return out.String(), nil
}
