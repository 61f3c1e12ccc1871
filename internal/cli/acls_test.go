package cli

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/server"
)

// startAuthorizingBroker starts a node with the authorizer on and the CLI's
// principal (User:ANONYMOUS on plaintext) a super user.
func startAuthorizingBroker(t *testing.T) string {
	t.Helper()
	cfg, _, err := config.Load("", []string{
		"listeners=PLAINTEXT://127.0.0.1:0",
		"log.dirs=" + t.TempDir(),
		"metrics.listener=",
		"authorizer.class.name=" + config.StandardAuthorizerClass,
		"super.users=User:ANONYMOUS",
	}, nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	node, err := server.Start(cfg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("start samsa node: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		node.Shutdown(ctx)
	})
	return node.Addrs()[0].String()
}

func TestACLsCommands(t *testing.T) {
	t.Parallel()
	bootstrap := startAuthorizingBroker(t)

	var created []describedACL
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "create", "--allow-principal", "User:alice", "--operation", "Read",
		"--operation", "describe", "--topic", "orders", "-o", "json").stdout, &created)
	if len(created) != 2 || created[0].Principal != "User:alice" || created[0].Host != "*" || created[0].PatternType != "LITERAL" {
		t.Fatalf("create: %+v", created)
	}
	// --consumer: READ and DESCRIBE on the topic, READ on the group.
	out := mustRun(t, bootstrap, "", "acls", "create", "--allow-principal", "User:app", "--consumer", "--topic", "orders", "--group", "billing").stdout
	if rows := tableRows(out, "GROUP"); len(rows) != 1 || rows[0][5] != "READ" {
		t.Fatalf("--consumer group rows: %v\n%s", rows, out)
	}
	// --producer with a prefixed transactional id.
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "create", "--allow-principal", "User:app", "--producer", "--topic", "team-",
		"--transactional-id", "app-", "--idempotent", "--resource-pattern-type", "prefixed", "-o", "json").stdout, &created)
	if len(created) != 6 {
		t.Fatalf("--producer created %d ACLs, want 6: %+v", len(created), created)
	}
	mustRun(t, bootstrap, "", "acls", "create", "--deny-principal", "User:mallory", "--deny-host", "10.0.0.9", "--topic", "orders")

	var listed []describedACL
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "list", "--topic", "orders", "-o", "json").stdout, &listed)
	if len(listed) != 5 {
		t.Fatalf("list --topic orders: %d ACLs, want 5: %+v", len(listed), listed)
	}
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "list", "--topic", "team-orders", "--resource-pattern-type", "match", "-o", "json").stdout, &listed)
	if len(listed) != 3 {
		t.Fatalf("list match team-orders: %d ACLs, want the 3 prefixed: %+v", len(listed), listed)
	}
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "list", "--principal", "User:alice", "-o", "json").stdout, &listed)
	if len(listed) != 2 {
		t.Fatalf("list --principal User:alice: %+v", listed)
	}

	var deleted []describedACL
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "delete", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "orders", "-o", "json").stdout, &deleted)
	if len(deleted) != 1 || deleted[0].Operation != "READ" {
		t.Fatalf("delete alice READ: %+v", deleted)
	}
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "delete", "--topic", "orders", "-o", "json").stdout, &deleted)
	if len(deleted) != 4 {
		t.Fatalf("delete every ACL on orders: %d, want 4: %+v", len(deleted), deleted)
	}
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "list", "-o", "json").stdout, &listed)
	if len(listed) != 7 {
		t.Fatalf("left after deletes: %d, want 7: %+v", len(listed), listed)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"acls", "create", "--topic", "orders"}, "give --allow-principal or --deny-principal"},
		{[]string{"acls", "create", "--allow-principal", "alice", "--topic", "orders"}, "must be Type:name"},
		{[]string{"acls", "create", "--allow-principal", "User:a"}, "give a resource"},
		{[]string{"acls", "create", "--allow-principal", "User:a", "--topic", "t", "--operation", "Fly"}, `unknown --operation "Fly"`},
		{[]string{"acls", "create", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "match"}, "--resource-pattern-type must be one of"},
		{[]string{"acls", "create", "--allow-principal", "User:a", "--consumer", "--topic", "t"}, "--consumer needs --topic and --group"},
		{[]string{"acls", "delete"}, "give a resource"},
	} {
		mustFail(t, bootstrap, "", tc.args, tc.want)
	}
}

// Without an authorizer the broker answers SECURITY_DISABLED.
func TestACLsCommandsSecurityDisabled(t *testing.T) {
	t.Parallel()
	bootstrap := startTestBroker(t)
	mustFail(t, bootstrap, "", []string{"acls", "list"}, "SECURITY_DISABLED")
	mustFail(t, bootstrap, "", []string{"acls", "create", "--allow-principal", "User:a", "--topic", "t"}, "SECURITY_DISABLED")
}

// --registry-subject and --registry create, list and delete ACLs on the
// schema registry's SUBJECT and REGISTRY resources; a prefixed REGISTRY
// ACL is refused by the broker.
func TestACLsCommandsRegistryResources(t *testing.T) {
	t.Parallel()
	bootstrap := startAuthorizingBroker(t)

	var created []describedACL
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "create", "--allow-principal", "User:alice", "--operation", "Write",
		"--registry-subject", "orders-value", "--registry-subject", "orders-key", "-o", "json").stdout, &created)
	if len(created) != 2 || created[0].ResourceType != "SUBJECT" || created[0].Operation != "WRITE" {
		t.Fatalf("create --registry-subject: %+v", created)
	}
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "create", "--allow-principal", "User:alice", "--operation", "AlterConfigs",
		"--registry", "-o", "json").stdout, &created)
	if len(created) != 1 || created[0].ResourceType != "REGISTRY" || created[0].Name != "schema-registry" {
		t.Fatalf("create --registry: %+v", created)
	}
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "create", "--allow-principal", "User:bob", "--operation", "Read",
		"--registry-subject", "payments-", "--resource-pattern-type", "prefixed", "-o", "json").stdout, &created)
	if len(created) != 1 || created[0].PatternType != "PREFIXED" {
		t.Fatalf("create prefixed --registry-subject: %+v", created)
	}

	var listed []describedACL
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "list", "--registry-subject", "payments-value", "--resource-pattern-type", "match", "-o", "json").stdout, &listed)
	if len(listed) != 1 || listed[0].Principal != "User:bob" {
		t.Fatalf("list match payments-value: %+v", listed)
	}
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "list", "--registry", "-o", "json").stdout, &listed)
	if len(listed) != 1 || listed[0].Operation != "ALTER_CONFIGS" {
		t.Fatalf("list --registry: %+v", listed)
	}
	// The subject of a name is not the topic of that name.
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "list", "--topic", "orders-value", "-o", "json").stdout, &listed)
	if len(listed) != 0 {
		t.Fatalf("list --topic orders-value: %+v", listed)
	}
	mustFail(t, bootstrap, "", []string{"acls", "create", "--allow-principal", "User:a", "--registry", "--resource-pattern-type", "prefixed"}, "REGISTRY")

	var deleted []describedACL
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "delete", "--registry-subject", "orders-value", "-o", "json").stdout, &deleted)
	if len(deleted) != 1 || deleted[0].Name != "orders-value" {
		t.Fatalf("delete --registry-subject orders-value: %+v", deleted)
	}
	decodeJSON(t, mustRun(t, bootstrap, "", "acls", "list", "-o", "json").stdout, &listed)
	if len(listed) != 3 {
		t.Fatalf("left after the delete: %d, want 3: %+v", len(listed), listed)
	}
}
