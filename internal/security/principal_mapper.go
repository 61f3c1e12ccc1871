package security

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ssl.principal.mapping.rules is a comma-separated list of rules, tried in
// order on the RFC 2253 distinguished name; the first that applies names the
// principal:
//
//	DEFAULT                     the distinguished name itself
//	RULE:pattern/replacement/   if pattern matches the whole name, the name
//	RULE:pattern/replacement/L  with every match replaced (Java's
//	RULE:pattern/replacement/U  replaceAll), lower- or upper-cased
//
// "\" escapes "/" and "\" inside pattern and replacement. Empty rules are
// ignored. Patterns are Go regular expressions (RE2), which accept the
// patterns Kafka's documentation shows; Java-only constructs (look-around,
// back references in the pattern) are refused when the rules are parsed.
// Replacements follow Java's rules: $n and ${name} are groups, "\" quotes
// the next character, and a $n beyond the groups is read as Kafka reads it
// (fewer digits, or literal).

// rulePattern is Kafka's grammar of one rule.
const rulePattern = `(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`

var (
	ruleSplitter  = regexp.MustCompile(`\s*(` + rulePattern + `)\s*(,\s*|$)`)
	ruleParser    = regexp.MustCompile(`^(?:` + rulePattern + `)`)
	backReference = regexp.MustCompile(`\$(\d+)`)
)

// principalRulesBytesMax bounds the rules text parsed.
const principalRulesBytesMax = 64 << 10

// PrincipalMapper applies ssl.principal.mapping.rules. It is immutable and
// safe for concurrent use.
type PrincipalMapper struct {
	rules []mappingRule
}

type mappingRule struct {
	isDefault   bool
	source      string // the pattern as written
	pattern     *regexp.Regexp
	whole       *regexp.Regexp // pattern anchored at both ends
	replacement string
	toLower     bool
	toUpper     bool
}

// NewPrincipalMapper parses ssl.principal.mapping.rules.
func NewPrincipalMapper(rules string) (*PrincipalMapper, error) {
	if len(rules) > principalRulesBytesMax {
		return nil, fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalidConfig, KeyPrincipalMappingRules, principalRulesBytesMax)
	}
	mapper := &PrincipalMapper{}
	for _, text := range splitRules(strings.TrimSpace(rules)) {
		match := ruleParser.FindStringSubmatchIndex(text)
		if match == nil || match[1] != len(text) {
			return nil, fmt.Errorf("%w: %s: invalid rule %q", ErrInvalidConfig, KeyPrincipalMappingRules, text)
		}
		group := func(i int) (string, bool) {
			if match[2*i] < 0 {
				return "", false
			}
			return text[match[2*i]:match[2*i+1]], true
		}
		if _, ok := group(1); ok {
			mapper.rules = append(mapper.rules, mappingRule{isDefault: true})
			continue
		}
		source, ok := group(2)
		if !ok {
			continue // an empty rule
		}
		replacement, _ := group(4)
		caseFlag, _ := group(6)
		pattern, err := regexp.Compile(source)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: rule %q: %w", ErrInvalidConfig, KeyPrincipalMappingRules, text, err)
		}
		mapper.rules = append(mapper.rules, mappingRule{
			source:      source,
			pattern:     pattern,
			whole:       regexp.MustCompile(`^(?:` + source + `)$`),
			replacement: replacement,
			toLower:     caseFlag == "L",
			toUpper:     caseFlag == "U",
		})
	}
	return mapper, nil
}

// splitRules finds the rules as Java's Matcher.find loop over the splitter
// does: each search starts where the last match ended, one further after an
// empty match.
func splitRules(rules string) []string {
	var found []string
	for position := 0; position <= len(rules); {
		match := ruleSplitter.FindStringSubmatchIndex(rules[position:])
		if match == nil {
			break
		}
		found = append(found, rules[position+match[2]:position+match[3]])
		if match[1] == match[0] {
			position += match[1] + 1
		} else {
			position += match[1]
		}
	}
	return found
}

// Name maps a distinguished name to a principal name with the first rule
// that applies.
func (m *PrincipalMapper) Name(distinguishedName string) (string, error) {
	for _, rule := range m.rules {
		name, ok, err := rule.apply(distinguishedName)
		if err != nil {
			return "", err
		}
		if ok {
			return name, nil
		}
	}
	return "", fmt.Errorf("%w: to %s, rules %s", ErrNoMatchingRule, distinguishedName, m.String())
}

func (r mappingRule) apply(distinguishedName string) (string, bool, error) {
	if r.isDefault {
		return distinguishedName, true, nil
	}
	if !r.whole.MatchString(distinguishedName) {
		return "", false, nil
	}
	replacement := escapeLiteralBackReferences(r.replacement, r.pattern.NumSubexp())
	var b strings.Builder
	last := 0
	for _, match := range r.pattern.FindAllStringSubmatchIndex(distinguishedName, -1) {
		b.WriteString(distinguishedName[last:match[0]])
		if err := expandJavaReplacement(&b, replacement, distinguishedName, match, r.pattern); err != nil {
			return "", false, err
		}
		last = match[1]
	}
	b.WriteString(distinguishedName[last:])
	result := b.String()
	switch {
	case r.toLower:
		result = strings.ToLower(result)
	case r.toUpper:
		result = strings.ToUpper(result)
	}
	return result, true, nil
}

// escapeLiteralBackReferences quotes back references to groups the pattern
// does not have, as Kafka does before replaceAll: $123 with 12 groups is
// group 12 then "3", with fewer than 12 it is group 1 then "23", and with no
// such group the "$" is literal.
func escapeLiteralBackReferences(replacement string, groups int) string {
	if groups == 0 {
		return replacement
	}
	// As in Kafka, positions come from the original string even after an
	// earlier quoting has shifted the value by one.
	value := replacement
	for _, match := range backReference.FindAllStringSubmatchIndex(replacement, -1) {
		digits := replacement[match[2]:match[3]]
		if strings.HasPrefix(digits, "0") {
			continue
		}
		index, err := strconv.Atoi(digits)
		if err != nil {
			index = groups + 1 // too long for an int: certainly beyond the groups
			for len(digits) > 1 && index > groups {
				digits = digits[:len(digits)-1]
				index, _ = strconv.Atoi(digits)
			}
		}
		for index > groups && index >= 10 {
			index /= 10
		}
		if index > groups {
			groupStart := min(match[2], len(value))
			value = value[:groupStart-1] + `\` + value[groupStart-1:]
		}
	}
	return value
}

// expandJavaReplacement appends replacement with Java's Matcher semantics.
func expandJavaReplacement(b *strings.Builder, replacement, input string, match []int, pattern *regexp.Regexp) error {
	groups := pattern.NumSubexp()
	groupText := func(i int) string {
		if match[2*i] < 0 {
			return ""
		}
		return input[match[2*i]:match[2*i+1]]
	}
	for i := 0; i < len(replacement); {
		c := replacement[i]
		switch c {
		case '\\':
			i++
			if i == len(replacement) {
				return fmt.Errorf("%w: character to be escaped is missing in replacement %q", ErrInvalidConfig, replacement)
			}
			b.WriteByte(replacement[i])
			i++
		case '$':
			i++
			if i == len(replacement) {
				return fmt.Errorf("%w: illegal group reference: group index is missing in replacement %q", ErrInvalidConfig, replacement)
			}
			if replacement[i] == '{' {
				end := strings.IndexByte(replacement[i:], '}')
				if end < 0 {
					return fmt.Errorf("%w: named capturing group is missing trailing '}' in replacement %q", ErrInvalidConfig, replacement)
				}
				name := replacement[i+1 : i+end]
				index := pattern.SubexpIndex(name)
				if index < 0 {
					return fmt.Errorf("%w: no group with name {%s}", ErrInvalidConfig, name)
				}
				b.WriteString(groupText(index))
				i += end + 1
				continue
			}
			if replacement[i] < '0' || replacement[i] > '9' {
				return fmt.Errorf("%w: illegal group reference in replacement %q", ErrInvalidConfig, replacement)
			}
			index := int(replacement[i] - '0')
			i++
			for i < len(replacement) && replacement[i] >= '0' && replacement[i] <= '9' {
				next := index*10 + int(replacement[i]-'0')
				if next > groups {
					break
				}
				index = next
				i++
			}
			if index > groups {
				return fmt.Errorf("%w: no group %d in rule pattern", ErrInvalidConfig, index)
			}
			b.WriteString(groupText(index))
		default:
			b.WriteByte(c)
			i++
		}
	}
	return nil
}

// String writes the rules as Kafka's SslPrincipalMapper.toString does.
func (m *PrincipalMapper) String() string {
	parts := make([]string, len(m.rules))
	for i, rule := range m.rules {
		parts[i] = rule.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (r mappingRule) String() string {
	if r.isDefault {
		return "DEFAULT"
	}
	s := "RULE:" + r.source + "/" + r.replacement
	switch {
	case r.toLower:
		s += "/L"
	case r.toUpper:
		s += "/U"
	}
	return s
}
