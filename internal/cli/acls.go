package cli

// samsa acls list|create|delete: Kafka's kafka-acls.sh --list / --add /
// --remove, with its options: --allow-principal, --deny-principal,
// --allow-host, --deny-host, --operation, --topic, --group,
// --transactional-id, --cluster, --delegation-token, --user-principal,
// --resource-pattern-type and the --producer / --consumer / --idempotent
// shortcuts; and, for the schema registry's resources (Samsa's own, as
// Redpanda's rpk has them), --registry-subject and --registry.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-streaming/samsa/internal/authz"
)

// aclFlags are the options of the acls commands.
type aclFlags struct {
	allowPrincipals  []string
	denyPrincipals   []string
	allowHosts       []string
	denyHosts        []string
	operations       []string
	topics           []string
	groups           []string
	transactionalIDs []string
	delegationTokens []string
	userPrincipals   []string
	registrySubjects []string
	cluster          bool
	registry         bool
	patternType      string
	principal        string
	producer         bool
	consumer         bool
	idempotent       bool
}

func (f *aclFlags) addResourceFlags(cmd *cobra.Command) {
	flags := cmd.Flags()
	flags.StringSliceVar(&f.topics, "topic", nil, "topic (repeatable; * for every topic)")
	flags.StringSliceVar(&f.groups, "group", nil, "consumer group (repeatable; * for every group)")
	flags.StringSliceVar(&f.transactionalIDs, "transactional-id", nil, "transactional id (repeatable; * for every one)")
	flags.StringSliceVar(&f.delegationTokens, "delegation-token", nil, "delegation token id (repeatable)")
	flags.StringSliceVar(&f.userPrincipals, "user-principal", nil, "user principal, for ACLs on users (repeatable)")
	flags.BoolVar(&f.cluster, "cluster", false, "the cluster resource ("+authz.ClusterName+")")
	flags.StringSliceVar(&f.registrySubjects, "registry-subject", nil, "schema registry subject (repeatable; * for every subject)")
	flags.BoolVar(&f.registry, "registry", false, "the schema registry as a whole ("+authz.RegistryName+"): its global config and mode")
}

func (f *aclFlags) addEntryFlags(cmd *cobra.Command) {
	flags := cmd.Flags()
	flags.StringSliceVar(&f.allowPrincipals, "allow-principal", nil, "principal to allow, as User:name (repeatable)")
	flags.StringSliceVar(&f.denyPrincipals, "deny-principal", nil, "principal to deny, as User:name (repeatable)")
	flags.StringSliceVar(&f.allowHosts, "allow-host", nil, "host (IP address) the allowed principals may connect from (default *)")
	flags.StringSliceVar(&f.denyHosts, "deny-host", nil, "host (IP address) the denied principals are denied from (default *)")
	flags.StringSliceVar(&f.operations, "operation", nil, "operation: Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens, All (repeatable; default All)")
}

// resources are the resource patterns the flags name.
func (f *aclFlags) resources(cmd *cobra.Command, pattern authz.PatternType) ([]authz.Binding, error) {
	var out []authz.Binding
	add := func(rt authz.ResourceType, names []string) {
		for _, name := range names {
			out = append(out, authz.Binding{ResourceType: rt, ResourceName: name, PatternType: pattern})
		}
	}
	add(authz.ResourceTopic, f.topics)
	add(authz.ResourceGroup, f.groups)
	add(authz.ResourceTransactionalID, f.transactionalIDs)
	add(authz.ResourceDelegationToken, f.delegationTokens)
	add(authz.ResourceUser, f.userPrincipals)
	if f.cluster {
		add(authz.ResourceCluster, []string{authz.ClusterName})
	}
	add(authz.ResourceSubject, f.registrySubjects)
	if f.registry {
		add(authz.ResourceRegistry, []string{authz.RegistryName})
	}
	for _, b := range out {
		if b.ResourceName == "" {
			return nil, newUsageError(cmd.CommandPath(), "resource names must not be empty")
		}
	}
	return out, nil
}

// parsePattern parses --resource-pattern-type, defaulting to def.
func (f *aclFlags) parsePattern(cmd *cobra.Command, def authz.PatternType, allowed ...authz.PatternType) (authz.PatternType, error) {
	if f.patternType == "" {
		return def, nil
	}
	p, ok := authz.ParsePatternType(f.patternType)
	if !ok || !slices.Contains(allowed, p) {
		names := make([]string, len(allowed))
		for i, a := range allowed {
			names[i] = strings.ToLower(a.String())
		}
		return 0, newUsageError(cmd.CommandPath(), "--resource-pattern-type must be one of %s, got %q", strings.Join(names, ", "), f.patternType)
	}
	return p, nil
}

// parseOperations parses --operation, defaulting to def.
func (f *aclFlags) parseOperations(cmd *cobra.Command, def authz.Operation) ([]authz.Operation, error) {
	if len(f.operations) == 0 {
		return []authz.Operation{def}, nil
	}
	var out []authz.Operation
	for _, name := range f.operations {
		op, ok := authz.ParseOperation(name)
		if !ok || op == authz.OpUnknown || op == authz.OpAny && def != authz.OpAny {
			return nil, newUsageError(cmd.CommandPath(), "unknown --operation %q", name)
		}
		out = append(out, op)
	}
	return out, nil
}

// entry is one principal, host and permission of a creation.
type aclEntry struct {
	principal  string
	host       string
	permission authz.Permission
}

func (f *aclFlags) entries(cmd *cobra.Command) ([]aclEntry, error) {
	var out []aclEntry
	expand := func(principals, hosts []string, permission authz.Permission) error {
		if len(hosts) == 0 {
			hosts = []string{authz.Wildcard}
		}
		for _, p := range principals {
			if !strings.Contains(p, ":") {
				return newUsageError(cmd.CommandPath(), "principal %q must be Type:name, such as User:alice", p)
			}
			for _, h := range hosts {
				out = append(out, aclEntry{principal: p, host: h, permission: permission})
			}
		}
		return nil
	}
	if err := expand(f.allowPrincipals, f.allowHosts, authz.PermissionAllow); err != nil {
		return nil, err
	}
	if err := expand(f.denyPrincipals, f.denyHosts, authz.PermissionDeny); err != nil {
		return nil, err
	}
	return out, nil
}

// shortcutBindings expands --producer, --consumer and --idempotent as
// kafka-acls.sh does: a producer may WRITE, DESCRIBE and CREATE its topics
// and WRITE and DESCRIBE its transactional ids (IDEMPOTENT_WRITE on the
// cluster with --idempotent); a consumer may READ and DESCRIBE its topics
// and READ its groups.
func (f *aclFlags) shortcutBindings(cmd *cobra.Command, pattern authz.PatternType) ([]authz.Binding, error) {
	var out []authz.Binding
	on := func(rt authz.ResourceType, names []string, ops ...authz.Operation) {
		for _, name := range names {
			for _, op := range ops {
				out = append(out, authz.Binding{ResourceType: rt, ResourceName: name, PatternType: pattern, Operation: op})
			}
		}
	}
	if f.producer {
		if len(f.topics) == 0 {
			return nil, newUsageError(cmd.CommandPath(), "--producer needs --topic")
		}
		on(authz.ResourceTopic, f.topics, authz.OpWrite, authz.OpDescribe, authz.OpCreate)
		on(authz.ResourceTransactionalID, f.transactionalIDs, authz.OpWrite, authz.OpDescribe)
		if f.idempotent {
			on(authz.ResourceCluster, []string{authz.ClusterName}, authz.OpIdempotentWrite)
		}
	}
	if f.consumer {
		if len(f.topics) == 0 || len(f.groups) == 0 {
			return nil, newUsageError(cmd.CommandPath(), "--consumer needs --topic and --group")
		}
		on(authz.ResourceTopic, f.topics, authz.OpRead, authz.OpDescribe)
		on(authz.ResourceGroup, f.groups, authz.OpRead)
	}
	return out, nil
}

// describedACL is one ACL in the output of the acls commands.
type describedACL struct {
	ResourceType string `json:"resourceType"`
	Name         string `json:"name"`
	PatternType  string `json:"patternType"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
}

func describe(b authz.Binding) describedACL {
	return describedACL{ResourceType: b.ResourceType.String(), Name: b.ResourceName, PatternType: b.PatternType.String(),
		Principal: b.Principal, Host: b.Host, Operation: b.Operation.String(), Permission: b.Permission.String()}
}

func writeACLs(cmd *cobra.Command, opts *globalOptions, acls []describedACL) error {
	slices.SortFunc(acls, func(a, b describedACL) int {
		return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
	})
	out := cmd.OutOrStdout()
	if opts.jsonOutput() {
		return writeJSON(out, acls)
	}
	t := newTable(out, "RESOURCE-TYPE", "NAME", "PATTERN", "PRINCIPAL", "HOST", "OPERATION", "PERMISSION")
	for _, a := range acls {
		t.row(a.ResourceType, a.Name, a.PatternType, a.Principal, a.Host, a.Operation, a.Permission)
	}
	return t.flush()
}

func newACLsCommand(opts *globalOptions) *cobra.Command {
	cmd := newParentCommand("acls", "List, create and delete ACLs",
		`  samsa acls create --allow-principal User:alice --operation Read --topic orders
  samsa acls create --allow-principal User:app --producer --topic orders --transactional-id app-
  samsa acls list --topic orders
  samsa acls delete --allow-principal User:alice --operation Read --topic orders`)
	cmd.AddCommand(newACLsListCommand(opts), newACLsCreateCommand(opts), newACLsDeleteCommand(opts))
	return cmd
}

func newACLsListCommand(opts *globalOptions) *cobra.Command {
	var f aclFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List ACLs (kafka-acls --list)",
		Long: `List the ACLs on the named resources, or every ACL. --resource-pattern-type
match lists the ACLs that apply to a resource name (its literal ACLs, the
wildcard and every prefix of it); any (the default) lists ACLs of any pattern
with exactly that name.`,
		Example: `  samsa acls list
  samsa acls list --topic orders
  samsa acls list --topic orders-2026 --resource-pattern-type match
  samsa acls list --principal User:alice`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			pattern, err := f.parsePattern(cmd, authz.PatternAny, authz.PatternAny, authz.PatternMatch, authz.PatternLiteral, authz.PatternPrefixed)
			if err != nil {
				return err
			}
			resources, err := f.resources(cmd, pattern)
			if err != nil {
				return err
			}
			filters := []authz.Filter{}
			var principal *string
			if f.principal != "" {
				principal = &f.principal
			}
			for _, r := range resources {
				name := r.ResourceName
				filters = append(filters, authz.Filter{ResourceType: r.ResourceType, ResourceName: &name, PatternType: pattern,
					Principal: principal, Operation: authz.OpAny, Permission: authz.PermissionAny})
			}
			if len(filters) == 0 {
				// ANY selects Kafka's resource types only; the registry's
				// are asked for by name.
				for _, all := range append([]authz.Filter{authz.MatchAll}, authz.RegistryFilters...) {
					all.Principal = principal
					filters = append(filters, all)
				}
			}
			client, ctx, done, err := opts.clientSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			var listed []describedACL
			for _, filter := range filters {
				req := kmsg.NewPtrDescribeACLsRequest()
				req.ResourceType, req.ResourceName = kmsg.ACLResourceType(filter.ResourceType), filter.ResourceName
				req.ResourcePatternType = kmsg.ACLResourcePatternType(filter.PatternType)
				req.Principal, req.Operation, req.PermissionType = filter.Principal, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
				resp, err := req.RequestWith(ctx, client)
				if err != nil {
					return fmt.Errorf("describe ACLs: %w", err)
				}
				if err := kafkaError(kerr.ErrorForCode(resp.ErrorCode), derefString(resp.ErrorMessage)); err != nil {
					return fmt.Errorf("describe ACLs: %w", err)
				}
				for _, res := range resp.Resources {
					for _, acl := range res.ACLs {
						listed = append(listed, describe(authz.Binding{ResourceType: authz.ResourceType(res.ResourceType), ResourceName: res.ResourceName,
							PatternType: authz.PatternType(res.ResourcePatternType), Principal: acl.Principal, Host: acl.Host,
							Operation: authz.Operation(acl.Operation), Permission: authz.Permission(acl.PermissionType)}))
					}
				}
			}
			if listed == nil {
				listed = []describedACL{}
			}
			return writeACLs(cmd, opts, listed)
		},
	}
	f.addResourceFlags(cmd)
	cmd.Flags().StringVar(&f.patternType, "resource-pattern-type", "", "any (default), match, literal or prefixed")
	cmd.Flags().StringVar(&f.principal, "principal", "", "list only the ACLs of this principal")
	return cmd
}

func newACLsCreateCommand(opts *globalOptions) *cobra.Command {
	var f aclFlags
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create ACLs (kafka-acls --add)",
		Long: `Create one ACL for every principal, host, operation and resource given.
Without --allow-host or --deny-host the ACLs apply from any host (*); without
--operation they allow or deny All. --producer and --consumer add the ACLs a
producer or consumer of the topics needs instead of --operation.`,
		Example: `  samsa acls create --allow-principal User:alice --operation Read --operation Describe --topic orders
  samsa acls create --allow-principal User:app --consumer --topic orders --group billing
  samsa acls create --allow-principal User:app --producer --topic team- --resource-pattern-type prefixed
  samsa acls create --deny-principal User:mallory --deny-host 10.0.0.9 --operation All --topic orders
  samsa acls create --allow-principal User:app --operation Write --registry-subject orders-value
  samsa acls create --allow-principal User:ops --operation AlterConfigs --registry`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			bindings, err := f.creations(cmd)
			if err != nil {
				return err
			}
			client, ctx, done, err := opts.clientSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			req := kmsg.NewPtrCreateACLsRequest()
			for _, b := range bindings {
				c := kmsg.NewCreateACLsRequestCreation()
				c.ResourceType, c.ResourceName = kmsg.ACLResourceType(b.ResourceType), b.ResourceName
				c.ResourcePatternType = kmsg.ACLResourcePatternType(b.PatternType)
				c.Principal, c.Host = b.Principal, b.Host
				c.Operation, c.PermissionType = kmsg.ACLOperation(b.Operation), kmsg.ACLPermissionType(b.Permission)
				req.Creations = append(req.Creations, c)
			}
			resp, err := req.RequestWith(ctx, client)
			if err != nil {
				return fmt.Errorf("create ACLs: %w", err)
			}
			var created []describedACL
			for i, res := range resp.Results {
				if err := kafkaError(kerr.ErrorForCode(res.ErrorCode), derefString(res.ErrorMessage)); err != nil {
					return fmt.Errorf("create ACL %s: %w", bindings[i], err)
				}
				created = append(created, describe(bindings[i]))
			}
			return writeACLs(cmd, opts, created)
		},
	}
	f.addResourceFlags(cmd)
	f.addEntryFlags(cmd)
	cmd.Flags().StringVar(&f.patternType, "resource-pattern-type", "", "literal (default) or prefixed")
	cmd.Flags().BoolVar(&f.producer, "producer", false, "the ACLs a producer of --topic (and --transactional-id) needs")
	cmd.Flags().BoolVar(&f.consumer, "consumer", false, "the ACLs a consumer of --topic in --group needs")
	cmd.Flags().BoolVar(&f.idempotent, "idempotent", false, "with --producer, IdempotentWrite on the cluster too")
	return cmd
}

// creations are the bindings a create command asks for.
func (f *aclFlags) creations(cmd *cobra.Command) ([]authz.Binding, error) {
	pattern, err := f.parsePattern(cmd, authz.PatternLiteral, authz.PatternLiteral, authz.PatternPrefixed)
	if err != nil {
		return nil, err
	}
	entries, err := f.entries(cmd)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, newUsageError(cmd.CommandPath(), "give --allow-principal or --deny-principal")
	}
	var shapes []authz.Binding
	if f.producer || f.consumer {
		if len(f.operations) > 0 {
			return nil, newUsageError(cmd.CommandPath(), "--operation cannot go with --producer or --consumer")
		}
		if shapes, err = f.shortcutBindings(cmd, pattern); err != nil {
			return nil, err
		}
	} else {
		resources, err := f.resources(cmd, pattern)
		if err != nil {
			return nil, err
		}
		if len(resources) == 0 {
			return nil, newUsageError(cmd.CommandPath(), "give a resource: --topic, --group, --transactional-id, --cluster, --delegation-token, --user-principal, --registry-subject or --registry")
		}
		ops, err := f.parseOperations(cmd, authz.OpAll)
		if err != nil {
			return nil, err
		}
		for _, r := range resources {
			for _, op := range ops {
				r.Operation = op
				shapes = append(shapes, r)
			}
		}
	}
	var out []authz.Binding
	for _, e := range entries {
		for _, s := range shapes {
			s.Principal, s.Host, s.Permission = e.principal, e.host, e.permission
			out = append(out, s)
		}
	}
	return out, nil
}

func newACLsDeleteCommand(opts *globalOptions) *cobra.Command {
	var f aclFlags
	cmd := &cobra.Command{
		Use:   "delete",
		Short: "Delete ACLs (kafka-acls --remove)",
		Long: `Delete the ACLs matching the given resources, principals, hosts and
operations. Without a principal, every ACL on the resources is deleted, as
kafka-acls --remove does; the deleted ACLs are listed.`,
		Example: `  samsa acls delete --allow-principal User:alice --operation Read --topic orders
  samsa acls delete --topic orders
  samsa acls delete --allow-principal User:app --producer --topic team- --resource-pattern-type prefixed`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			filters, err := f.deletions(cmd)
			if err != nil {
				return err
			}
			client, ctx, done, err := opts.clientSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			req := kmsg.NewPtrDeleteACLsRequest()
			for _, filter := range filters {
				df := kmsg.NewDeleteACLsRequestFilter()
				df.ResourceType, df.ResourceName = kmsg.ACLResourceType(filter.ResourceType), filter.ResourceName
				df.ResourcePatternType = kmsg.ACLResourcePatternType(filter.PatternType)
				df.Principal, df.Host = filter.Principal, filter.Host
				df.Operation, df.PermissionType = kmsg.ACLOperation(filter.Operation), kmsg.ACLPermissionType(filter.Permission)
				req.Filters = append(req.Filters, df)
			}
			resp, err := req.RequestWith(ctx, client)
			if err != nil {
				return fmt.Errorf("delete ACLs: %w", err)
			}
			deleted := []describedACL{}
			for _, res := range resp.Results {
				if err := kafkaError(kerr.ErrorForCode(res.ErrorCode), derefString(res.ErrorMessage)); err != nil {
					return fmt.Errorf("delete ACLs: %w", err)
				}
				for _, m := range res.MatchingACLs {
					deleted = append(deleted, describe(authz.Binding{ResourceType: authz.ResourceType(m.ResourceType), ResourceName: m.ResourceName,
						PatternType: authz.PatternType(m.ResourcePatternType), Principal: m.Principal, Host: m.Host,
						Operation: authz.Operation(m.Operation), Permission: authz.Permission(m.PermissionType)}))
				}
			}
			return writeACLs(cmd, opts, deleted)
		},
	}
	f.addResourceFlags(cmd)
	f.addEntryFlags(cmd)
	cmd.Flags().StringVar(&f.patternType, "resource-pattern-type", "", "any (default), match, literal or prefixed")
	cmd.Flags().BoolVar(&f.producer, "producer", false, "the ACLs --producer created")
	cmd.Flags().BoolVar(&f.consumer, "consumer", false, "the ACLs --consumer created")
	cmd.Flags().BoolVar(&f.idempotent, "idempotent", false, "with --producer, IdempotentWrite on the cluster too")
	return cmd
}

// deletions are the filters a delete command asks for.
func (f *aclFlags) deletions(cmd *cobra.Command) ([]authz.Filter, error) {
	pattern, err := f.parsePattern(cmd, authz.PatternAny, authz.PatternAny, authz.PatternMatch, authz.PatternLiteral, authz.PatternPrefixed)
	if err != nil {
		return nil, err
	}
	var shapes []authz.Binding
	if f.producer || f.consumer {
		if shapes, err = f.shortcutBindings(cmd, pattern); err != nil {
			return nil, err
		}
	} else {
		resources, err := f.resources(cmd, pattern)
		if err != nil {
			return nil, err
		}
		if len(resources) == 0 {
			return nil, newUsageError(cmd.CommandPath(), "give a resource: --topic, --group, --transactional-id, --cluster, --delegation-token, --user-principal, --registry-subject or --registry")
		}
		ops, err := f.parseOperations(cmd, authz.OpAny)
		if err != nil {
			return nil, err
		}
		for _, r := range resources {
			for _, op := range ops {
				r.Operation = op
				shapes = append(shapes, r)
			}
		}
	}
	entries, err := f.entries(cmd)
	if err != nil {
		return nil, err
	}
	var out []authz.Filter
	filter := func(s authz.Binding, principal, host *string, permission authz.Permission) authz.Filter {
		name := s.ResourceName
		return authz.Filter{ResourceType: s.ResourceType, ResourceName: &name, PatternType: s.PatternType,
			Principal: principal, Host: host, Operation: s.Operation, Permission: permission}
	}
	for _, s := range shapes {
		if len(entries) == 0 {
			out = append(out, filter(s, nil, nil, authz.PermissionAny))
			continue
		}
		for _, e := range entries {
			principal, host := e.principal, e.host
			var hostFilter *string
			if host != authz.Wildcard || f.hostsGiven(e.permission) {
				hostFilter = &host
			}
			out = append(out, filter(s, &principal, hostFilter, e.permission))
		}
	}
	return out, nil
}

// hostsGiven reports whether hosts were named for the permission's
// principals (a "*" named explicitly filters on the wildcard host).
func (f *aclFlags) hostsGiven(permission authz.Permission) bool {
	if permission == authz.PermissionAllow {
		return len(f.allowHosts) > 0
	}
	return len(f.denyHosts) > 0
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
