package security

import (
	"errors"
	"testing"
)

// The vectors of Kafka's SslPrincipalMapperTest.

func TestPrincipalMapperValidRules(t *testing.T) {
	for _, rules := range []string{
		"DEFAULT",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
		"RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
		"RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
		"RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
	} {
		if _, err := NewPrincipalMapper(rules); err != nil {
			t.Errorf("NewPrincipalMapper(%q): %v", rules, err)
		}
	}
}

func TestPrincipalMapperInvalidRules(t *testing.T) {
	for _, rules := range []string{
		"default",
		"DEFAUL",
		"DEFAULT/L",
		"DEFAULT/U",
		"RULE:CN=(.*?),OU=ServiceUsers.*/$1",
		"rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
	} {
		if _, err := NewPrincipalMapper(rules); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewPrincipalMapper(%q) = %v, want ErrInvalidConfig", rules, err)
		}
	}
}

func TestPrincipalMapperNames(t *testing.T) {
	mapper, err := NewPrincipalMapper("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, " +
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, " +
		"RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U, " +
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U, " +
		"DEFAULT")
	if err != nil {
		t.Fatal(err)
	}
	for dn, want := range map[string]string{
		"CN=Duke,OU=ServiceUsers,O=Org,C=US":        "duke",
		"CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US": "duke@sme",
		"cn=duke,ou=sme,dc=mycp,dc=com":             "DUKE@SME",
		"cN=duke,OU=JavaSoft,O=Sun Microsystems":    "DUKE",
		"OU=JavaSoft,O=Sun Microsystems,C=US":       "OU=JavaSoft,O=Sun Microsystems,C=US",
	} {
		got, err := mapper.Name(dn)
		if err != nil || got != want {
			t.Errorf("Name(%q) = %q, %v; want %q", dn, got, err, want)
		}
	}
}

func TestPrincipalMapperRulesSplitting(t *testing.T) {
	for _, c := range []struct{ want, rules string }{
		{"[]", ""},
		{"[DEFAULT]", "DEFAULT"},
		{"[RULE:/]", "RULE://"},
		{"[RULE:/.*]", "RULE:/.*/"},
		{"[RULE:/.*/L]", "RULE:/.*/L"},
		{"[RULE:/, DEFAULT]", "RULE://,DEFAULT"},
		{"[RULE:/, DEFAULT]", "  RULE:// ,  DEFAULT  "},
		{"[RULE:   /     , DEFAULT]", "  RULE:   /     / ,  DEFAULT  "},
		{"[RULE:  /     /U, DEFAULT]", "  RULE:  /     /U   ,DEFAULT  "},
		{"[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]", "  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  "},
		{"[]", ",   , , ,      , , ,   "},
		{"[RULE:/, DEFAULT]", ",,RULE://,,,DEFAULT,,"},
		{"[RULE: /   , DEFAULT]", ",  , RULE: /   /    ,,,   DEFAULT, ,   "},
		{"[RULE:   /  /U, DEFAULT]", "     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,"},
		{`[RULE:\/\\\(\)\n\t/\/\/]`, `RULE:\/\\\(\)\n\t/\/\//`},
		{`[RULE:\**\/+/*/L, RULE:\/*\**/**]`, `RULE:\**\/+/*/L,RULE:\/*\**/**/`},
		{`[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]`,
			`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT`},
	} {
		mapper, err := NewPrincipalMapper(c.rules)
		if err != nil {
			t.Errorf("NewPrincipalMapper(%q): %v", c.rules, err)
			continue
		}
		if got := mapper.String(); got != c.want {
			t.Errorf("NewPrincipalMapper(%q) = %s, want %s", c.rules, got, c.want)
		}
	}
}

func TestPrincipalMapperCommaWithWhitespace(t *testing.T) {
	mapper, err := NewPrincipalMapper(`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := mapper.Name(`CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`)
	if want := `Tkac\, Adam`; err != nil || got != want {
		t.Fatalf("Name = %q, %v; want %q", got, err, want)
	}
}

func TestPrincipalMapperBackReferences(t *testing.T) {
	// Kafka reads $4 with three groups as a literal "$4", and $12 with one
	// group as group 1 then "2".
	mapper, err := NewPrincipalMapper(`RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1@$4/, RULE:^CN=(.*)$/$12/`)
	if err != nil {
		t.Fatal(err)
	}
	for dn, want := range map[string]string{"CN=a,OU=b,O=c": "a@$4", "CN=x": "x2"} {
		if got, err := mapper.Name(dn); err != nil || got != want {
			t.Errorf("Name(%q) = %q, %v; want %q", dn, got, err, want)
		}
	}
	if _, err := mapper.Name("no match"); !errors.Is(err, ErrNoMatchingRule) {
		t.Errorf("Name without a matching rule = %v, want ErrNoMatchingRule", err)
	}
}

func FuzzPrincipalMappingRules(f *testing.F) {
	for _, seed := range []string{
		"DEFAULT", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT", `RULE:\/\\\(\)\n\t/\/\//`,
		"RULE:(.*)/${x}/", "RULE:(?P<x>.*)/${x}/U", "RULE:^(.*)$/$9$1\\/", ",,,", "RULE:[/x/",
	} {
		f.Add(seed, "CN=Duke,OU=ServiceUsers,O=Org,C=US")
	}
	f.Fuzz(func(t *testing.T, rules, distinguishedName string) {
		mapper, err := NewPrincipalMapper(rules)
		if err != nil {
			return
		}
		mapper.Name(distinguishedName)
		_ = mapper.String()
	})
}
