package cli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client quotas with kafka-configs' syntax: an entity is named by
// --entity-type (users, clients, ips) paired in order with --entity-name,
// or --entity-default for the type's default, or the shorthands --user,
// --client, --ip, --user-defaults, --client-defaults, --ip-defaults.
// "samsa quotas" and "samsa configs --entity-type ..." share it.

// quotaEntityFlags are the entity-naming flags of a quota command.
type quotaEntityFlags struct {
	types          []string
	names          []string
	entityDefault  bool
	user, client   string
	ip             string
	userDefaults   bool
	clientDefaults bool
	ipDefaults     bool
}

func (f *quotaEntityFlags) addFlags(cmd *cobra.Command) {
	flags := cmd.Flags()
	flags.StringArrayVar(&f.types, "entity-type", nil, "users, clients or ips; repeatable, paired in order with --entity-name")
	flags.StringArrayVar(&f.names, "entity-name", nil, "the name of the entity of the --entity-type at the same position")
	flags.BoolVar(&f.entityDefault, "entity-default", false, "the default entity of the --entity-type given without a name")
	flags.StringVar(&f.user, "user", "", "shorthand for --entity-type users --entity-name <user>")
	flags.StringVar(&f.client, "client", "", "shorthand for --entity-type clients --entity-name <client-id>")
	flags.StringVar(&f.ip, "ip", "", "shorthand for --entity-type ips --entity-name <ip>")
	flags.BoolVar(&f.userDefaults, "user-defaults", false, "the default user")
	flags.BoolVar(&f.clientDefaults, "client-defaults", false, "the default client id")
	flags.BoolVar(&f.ipDefaults, "ip-defaults", false, "the default IP")
}

// given reports whether any entity flag was set.
func (f *quotaEntityFlags) given(cmd *cobra.Command) bool {
	for _, name := range []string{"entity-type", "user", "client", "ip", "user-defaults", "client-defaults", "ip-defaults"} {
		if cmd.Flags().Changed(name) {
			return true
		}
	}
	return false
}

// quotaEntityTypes maps kafka-configs' entity types to the protocol's.
var quotaEntityTypes = map[string]string{"users": "user", "clients": "client-id", "ips": "ip"}

// entity resolves the flags into entity components, in the order user,
// client-id, ip. withoutName, for describe, lets a type stand alone to
// match any entity of it.
func (f *quotaEntityFlags) entity(cmd *cobra.Command) ([]kadm.ClientQuotaEntityComponent, []string, error) {
	type part struct {
		typ      string
		name     *string
		nameless bool
	}
	byType := map[string]part{}
	set := func(typ string, p part) error {
		if _, dup := byType[typ]; dup {
			return newUsageError(cmd.CommandPath(), "entity type %s given twice", typ)
		}
		byType[typ] = p
		return nil
	}
	if len(f.names) > len(f.types) {
		return nil, nil, newUsageError(cmd.CommandPath(), "more --entity-name than --entity-type")
	}
	defaultsUsed := false
	for i, t := range f.types {
		typ, ok := quotaEntityTypes[t]
		if !ok {
			return nil, nil, newUsageError(cmd.CommandPath(), "--entity-type must be users, clients or ips, got %q (topics and brokers are --topic and --broker)", t)
		}
		p := part{typ: typ}
		switch {
		case i < len(f.names):
			name := f.names[i]
			p.name = &name
		case f.entityDefault && !defaultsUsed:
			defaultsUsed = true
		default:
			p.nameless = true
		}
		if err := set(typ, p); err != nil {
			return nil, nil, err
		}
	}
	if f.entityDefault && !defaultsUsed {
		return nil, nil, newUsageError(cmd.CommandPath(), "--entity-default needs an --entity-type without --entity-name")
	}
	shorthands := []struct {
		flag, typ string
		value     string
		isDefault bool
	}{
		{"user", "user", f.user, false}, {"client", "client-id", f.client, false}, {"ip", "ip", f.ip, false},
		{"user-defaults", "user", "", f.userDefaults}, {"client-defaults", "client-id", "", f.clientDefaults}, {"ip-defaults", "ip", "", f.ipDefaults},
	}
	for _, s := range shorthands {
		if !cmd.Flags().Changed(s.flag) || (s.value == "" && !s.isDefault) {
			continue
		}
		p := part{typ: s.typ}
		if !s.isDefault {
			value := s.value
			p.name = &value
		}
		if err := set(s.typ, p); err != nil {
			return nil, nil, err
		}
	}
	var components []kadm.ClientQuotaEntityComponent
	var nameless []string
	for _, typ := range []string{"user", "client-id", "ip"} {
		p, ok := byType[typ]
		if !ok {
			continue
		}
		if p.nameless {
			nameless = append(nameless, typ)
			continue
		}
		components = append(components, kadm.ClientQuotaEntityComponent{Type: typ, Name: p.name})
	}
	return components, nameless, nil
}

func newQuotasCommand(opts *globalOptions) *cobra.Command {
	cmd := newParentCommand("quotas", "Describe and change client quotas of users, client ids and IPs",
		`  samsa quotas describe
  samsa quotas describe --entity-type users --entity-name alice
  samsa quotas alter --entity-type clients --entity-default --add-config consumer_byte_rate=1048576
  samsa quotas alter --user alice --client app --add-config producer_byte_rate=1048576,request_percentage=50
  samsa quotas alter --ip 10.0.0.1 --delete-config connection_creation_rate`)
	cmd.AddCommand(newQuotasDescribeCommand(opts), newQuotasAlterCommand(opts))
	return cmd
}

// describedQuota is one JSON entry of "quotas describe".
type describedQuota struct {
	Entity map[string]*string `json:"entity"`
	Quotas map[string]float64 `json:"quotas"`
}

func newQuotasDescribeCommand(opts *globalOptions) *cobra.Command {
	var entity quotaEntityFlags
	var all bool
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Show client quotas (DescribeClientQuotas)",
		Long: `Show client quotas. Without an entity, every entity with a quota. With one,
the entities that are exactly it; with --all, those that name it among
others too (alice's per-client quotas beside alice's). An --entity-type
without a name matches every entity of that type.`,
		Example: `  samsa quotas describe
  samsa quotas describe --entity-type users --entity-name alice --all
  samsa quotas describe --entity-type clients --entity-default -o json`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQuotasDescribe(cmd, opts, &entity, all)
		},
	}
	entity.addFlags(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "also show entities that name other types besides the ones given")
	return cmd
}

func runQuotasDescribe(cmd *cobra.Command, opts *globalOptions, entity *quotaEntityFlags, all bool) error {
	components, nameless, err := entity.entity(cmd)
	if err != nil {
		return err
	}
	var filter []kadm.DescribeClientQuotaComponent
	for _, c := range components {
		match := kadm.DescribeClientQuotaComponent{Type: c.Type, MatchName: c.Name, MatchType: kmsg.QuotasMatchTypeExact}
		if c.Name == nil {
			match.MatchType = kmsg.QuotasMatchTypeDefault
		}
		filter = append(filter, match)
	}
	for _, typ := range nameless {
		filter = append(filter, kadm.DescribeClientQuotaComponent{Type: typ, MatchType: kmsg.QuotasMatchTypeAny})
	}
	strict := len(filter) > 0 && !all
	admin, ctx, done, err := opts.adminSession(cmd.Context())
	if err != nil {
		return err
	}
	defer done()
	described, err := admin.DescribeClientQuotas(ctx, strict, filter)
	if err != nil {
		return fmt.Errorf("describe quotas: %w", err)
	}
	rows := make([]describedQuota, 0, len(described))
	for _, d := range described {
		row := describedQuota{Entity: map[string]*string{}, Quotas: map[string]float64{}}
		for _, c := range d.Entity {
			row.Entity[c.Type] = c.Name
		}
		for _, v := range d.Values {
			row.Quotas[v.Key] = v.Value
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return entityLabel(rows[i].Entity) < entityLabel(rows[j].Entity) })
	out := cmd.OutOrStdout()
	if opts.jsonOutput() {
		return writeJSON(out, rows)
	}
	t := newTable(out, "ENTITY", "QUOTAS")
	for _, r := range rows {
		keys := make([]string, 0, len(r.Quotas))
		for k := range r.Quotas {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var values []string
		for _, k := range keys {
			values = append(values, k+"="+strconv.FormatFloat(r.Quotas[k], 'f', -1, 64))
		}
		t.row(entityLabel(r.Entity), strings.Join(values, ","))
	}
	return t.flush()
}

// entityLabel renders an entity as user=alice,client-id=<default>.
func entityLabel(entity map[string]*string) string {
	var parts []string
	for _, typ := range []string{"user", "client-id", "ip"} {
		name, ok := entity[typ]
		if !ok {
			continue
		}
		if name == nil {
			parts = append(parts, typ+"=<default>")
		} else {
			parts = append(parts, typ+"="+*name)
		}
	}
	return strings.Join(parts, ",")
}

func newQuotasAlterCommand(opts *globalOptions) *cobra.Command {
	var entity quotaEntityFlags
	var addConfigs, deleteConfigs []string
	cmd := &cobra.Command{
		Use:   "alter",
		Short: "Set or remove client quotas (AlterClientQuotas)",
		Long: `Set quotas with --add-config key=value[,key=value...] and remove them with
--delete-config key[,key...]: producer_byte_rate, consumer_byte_rate,
request_percentage and controller_mutation_rate for users and client ids,
connection_creation_rate for IPs.`,
		Example: `  samsa quotas alter --entity-type users --entity-name alice --add-config producer_byte_rate=1048576
  samsa quotas alter --entity-type users --entity-default --entity-type clients --entity-default --add-config request_percentage=25
  samsa quotas alter --ip-defaults --add-config connection_creation_rate=10
  samsa quotas alter --client app --delete-config consumer_byte_rate`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQuotasAlter(cmd, opts, &entity, addConfigs, deleteConfigs)
		},
	}
	entity.addFlags(cmd)
	cmd.Flags().StringArrayVar(&addConfigs, "add-config", nil, "quotas to set, key=value[,key=value...]; repeatable")
	cmd.Flags().StringArrayVar(&deleteConfigs, "delete-config", nil, "quotas to remove, key[,key...]; repeatable")
	return cmd
}

func runQuotasAlter(cmd *cobra.Command, opts *globalOptions, entity *quotaEntityFlags, addConfigs, deleteConfigs []string) error {
	components, nameless, err := entity.entity(cmd)
	if err != nil {
		return err
	}
	if len(nameless) > 0 {
		return newUsageError(cmd.CommandPath(), "give --entity-name or --entity-default for --entity-type %s", nameless[0])
	}
	if len(components) == 0 {
		return newUsageError(cmd.CommandPath(), "name an entity: --entity-type with --entity-name or --entity-default, or --user, --client, --ip")
	}
	var ops []kadm.AlterClientQuotaOp
	for _, list := range addConfigs {
		for _, pair := range strings.Split(list, ",") {
			key, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || key == "" {
				return newUsageError(cmd.CommandPath(), "--add-config wants key=value, got %q", pair)
			}
			number, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return newUsageError(cmd.CommandPath(), "quota %s must be a number, got %q", key, value)
			}
			ops = append(ops, kadm.AlterClientQuotaOp{Key: key, Value: number})
		}
	}
	for _, list := range deleteConfigs {
		for _, key := range strings.Split(list, ",") {
			if key = strings.TrimSpace(key); key != "" {
				ops = append(ops, kadm.AlterClientQuotaOp{Key: key, Remove: true})
			}
		}
	}
	if len(ops) == 0 {
		return newUsageError(cmd.CommandPath(), "nothing to alter: give --add-config or --delete-config")
	}
	admin, ctx, done, err := opts.adminSession(cmd.Context())
	if err != nil {
		return err
	}
	defer done()
	altered, err := admin.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: components, Ops: ops}})
	if err != nil {
		return fmt.Errorf("alter quotas: %w", err)
	}
	label := map[string]*string{}
	for _, c := range components {
		label[c.Type] = c.Name
	}
	for _, a := range altered {
		if a.Err != nil {
			if a.ErrMessage != "" {
				return fmt.Errorf("alter quotas of %s: %w: %s", entityLabel(label), a.Err, a.ErrMessage)
			}
			return fmt.Errorf("alter quotas of %s: %w", entityLabel(label), a.Err)
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Altered the quotas of %s.\n", entityLabel(label))
	return nil
}
