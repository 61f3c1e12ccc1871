package security

// JAAS configuration text, as Kafka's sasl.jaas.config holds it:
//
//	<login module class> <flag> { <option>=<value> } ";"
//
// flag is required, requisite, sufficient or optional; a value is a word
// or a double-quoted string in which a backslash escapes the next
// character. Whitespace separates tokens; Kafka's property allows exactly
// one login module.

import (
	"errors"
	"fmt"
	"strings"
)

// maxJAASBytes bounds the text parsed (a config value, not network input,
// but a bound all the same).
const maxJAASBytes = 1 << 20

// ErrJAAS marks an invalid JAAS configuration.
var ErrJAAS = errors.New("security: invalid JAAS configuration")

// JAASModule is one login module entry.
type JAASModule struct {
	LoginModule string
	Flag        string
	Options     map[string]string
}

// ParseJAAS parses a sasl.jaas.config value with exactly one login module.
func ParseJAAS(text string) (JAASModule, error) {
	if len(text) > maxJAASBytes {
		return JAASModule{}, fmt.Errorf("%w: longer than %d bytes", ErrJAAS, maxJAASBytes)
	}
	p := jaasParser{text: text}
	module, err := p.module()
	if err != nil {
		return JAASModule{}, err
	}
	p.skipSpace()
	if p.pos != len(p.text) {
		return JAASModule{}, fmt.Errorf("%w: JAAS config property contains more than one login module", ErrJAAS)
	}
	return module, nil
}

type jaasParser struct {
	text string
	pos  int
}

func (p *jaasParser) skipSpace() {
	for p.pos < len(p.text) && strings.IndexByte(" \t\r\n", p.text[p.pos]) >= 0 {
		p.pos++
	}
}

// word reads a run of characters that are not space, '=', ';' or '"'.
func (p *jaasParser) word() string {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.text) && strings.IndexByte(" \t\r\n=;\"", p.text[p.pos]) < 0 {
		p.pos++
	}
	return p.text[start:p.pos]
}

func (p *jaasParser) module() (JAASModule, error) {
	m := JAASModule{Options: map[string]string{}}
	if m.LoginModule = p.word(); m.LoginModule == "" {
		return m, fmt.Errorf("%w: login module class missing", ErrJAAS)
	}
	switch m.Flag = strings.ToLower(p.word()); m.Flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return m, fmt.Errorf("%w: login module control flag %q is not required, requisite, sufficient or optional", ErrJAAS, m.Flag)
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.text) {
			return m, fmt.Errorf("%w: expected ';' to end the login module", ErrJAAS)
		}
		if p.text[p.pos] == ';' {
			p.pos++
			return m, nil
		}
		key := p.word()
		if key == "" {
			return m, fmt.Errorf("%w: option name expected at offset %d", ErrJAAS, p.pos)
		}
		p.skipSpace()
		if p.pos >= len(p.text) || p.text[p.pos] != '=' {
			return m, fmt.Errorf("%w: option %s has no value", ErrJAAS, key)
		}
		p.pos++
		value, err := p.value()
		if err != nil {
			return m, fmt.Errorf("%w (option %s)", err, key)
		}
		m.Options[key] = value
	}
}

func (p *jaasParser) value() (string, error) {
	p.skipSpace()
	if p.pos < len(p.text) && p.text[p.pos] == '"' {
		p.pos++
		var b strings.Builder
		for p.pos < len(p.text) {
			c := p.text[p.pos]
			p.pos++
			switch {
			case c == '\\' && p.pos < len(p.text):
				b.WriteByte(p.text[p.pos])
				p.pos++
			case c == '"':
				return b.String(), nil
			default:
				b.WriteByte(c)
			}
		}
		return "", fmt.Errorf("%w: unterminated quoted value", ErrJAAS)
	}
	value := p.word()
	if value == "" {
		return "", fmt.Errorf("%w: value expected", ErrJAAS)
	}
	return value, nil
}

// PlainUsers returns the user_<name>=<password> options of a PLAIN login
// module (Kafka's PlainLoginModule), for the server side.
func (m JAASModule) PlainUsers() map[string]string {
	users := make(map[string]string)
	for key, value := range m.Options {
		if name, ok := strings.CutPrefix(key, "user_"); ok && name != "" {
			users[name] = value
		}
	}
	return users
}
