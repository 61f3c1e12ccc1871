package authz

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScripts runs the scripts in testdata/*.txt. Each line is one step:
//
//	settings super=User:a;User:b allow-everyone=true   rebuild with settings
//	acl TYPE NAME PATTERN PRINCIPAL HOST OPERATION PERMISSION   add an ACL
//	remove TYPE NAME PATTERN PRINCIPAL HOST OPERATION PERMISSION
//	check PRINCIPAL HOST OPERATION TYPE NAME -> allow|deny
//	bytype PRINCIPAL HOST OPERATION TYPE -> allow|deny
//	ops PRINCIPAL HOST TYPE NAME -> OP,OP,...   (authorized operations)
//
// Blank lines and lines starting with # are ignored.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runScript(t, file) })
	}
}

func runScript(t *testing.T, file string) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var settings Settings
	var bindings []Binding
	a := New(settings)
	scanner := bufio.NewScanner(f)
	for lineNo := 1; scanner.Scan(); lineNo++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := file + ":" + itoa(lineNo)
		command, expected, _ := strings.Cut(line, "->")
		fields := strings.Fields(command)
		expected = strings.TrimSpace(expected)
		switch fields[0] {
		case "settings":
			settings = Settings{}
			for _, kv := range fields[1:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "super":
					settings.SuperUsers = strings.Split(v, ";")
				case "allow-everyone":
					settings.AllowEveryoneIfNoACLFound = v == "true"
				default:
					t.Fatalf("%s: unknown setting %q", where, k)
				}
			}
			a = New(settings)
			a.Replace(bindings)
		case "acl", "remove":
			b := parseBinding(t, where, fields[1:])
			if fields[0] == "acl" {
				bindings = append(bindings, b)
			} else {
				kept := bindings[:0]
				for _, x := range bindings {
					if x != b {
						kept = append(kept, x)
					}
				}
				bindings = kept
			}
			a.Replace(bindings)
		case "check":
			if len(fields) != 6 {
				t.Fatalf("%s: check wants 5 arguments", where)
			}
			op := mustOperation(t, where, fields[3])
			rt := mustResourceType(t, where, fields[4])
			got := verdictName(a.Authorize(fields[1], fields[2], op, rt, fields[5]))
			if got != expected {
				t.Errorf("%s: %s: got %s, want %s", where, command, got, expected)
			}
		case "bytype":
			op := mustOperation(t, where, fields[3])
			rt := mustResourceType(t, where, fields[4])
			got := verdictName(a.Index().AuthorizeByResourceType(fields[1], fields[2], op, rt))
			if got != expected {
				t.Errorf("%s: %s: got %s, want %s", where, command, got, expected)
			}
		case "ops":
			rt := mustResourceType(t, where, fields[3])
			supported := map[ResourceType][]Operation{ResourceTopic: TopicOperations, ResourceGroup: GroupOperations, ResourceCluster: ClusterOperations}[rt]
			bits := a.Index().AuthorizedOperations(fields[1], fields[2], rt, fields[4], supported)
			var names []string
			for op := Operation(0); op < numOperations; op++ {
				if bits&(1<<op) != 0 {
					names = append(names, op.String())
				}
			}
			if got := strings.Join(names, ","); got != expected {
				t.Errorf("%s: %s: got %s, want %s", where, command, got, expected)
			}
		default:
			t.Fatalf("%s: unknown command %q", where, fields[0])
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
}

func parseBinding(t *testing.T, where string, f []string) Binding {
	t.Helper()
	if len(f) != 7 {
		t.Fatalf("%s: an ACL has 7 fields, got %d", where, len(f))
	}
	pattern, ok := ParsePatternType(f[2])
	if !ok {
		t.Fatalf("%s: bad pattern type %q", where, f[2])
	}
	permission, ok := ParsePermission(f[6])
	if !ok {
		t.Fatalf("%s: bad permission %q", where, f[6])
	}
	return Binding{ResourceType: mustResourceType(t, where, f[0]), ResourceName: f[1], PatternType: pattern,
		Principal: f[3], Host: f[4], Operation: mustOperation(t, where, f[5]), Permission: permission}
}

func mustOperation(t *testing.T, where, s string) Operation {
	t.Helper()
	op, ok := ParseOperation(s)
	if !ok {
		t.Fatalf("%s: bad operation %q", where, s)
	}
	return op
}

func mustResourceType(t *testing.T, where, s string) ResourceType {
	t.Helper()
	rt, ok := ParseResourceType(s)
	if !ok {
		t.Fatalf("%s: bad resource type %q", where, s)
	}
	return rt
}

func verdictName(allowed bool) string {
	if allowed {
		return "allow"
	}
	return "deny"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
