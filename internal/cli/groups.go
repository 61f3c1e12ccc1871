package cli

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func newGroupsCommand(opts *globalOptions) *cobra.Command {
	cmd := newParentCommand("groups", "List, describe, delete consumer groups and reset their offsets",
		`  samsa groups list
  samsa groups describe billing
  samsa groups reset-offsets billing --topic orders --to-earliest --execute
  samsa groups delete billing`)
	cmd.AddCommand(
		newGroupsListCommand(opts),
		newGroupsDescribeCommand(opts),
		newGroupsDescribeShareCommand(opts),
		newGroupsDeleteCommand(opts),
		newGroupsResetOffsetsCommand(opts),
	)
	return cmd
}

// listedGroup is one row of "groups list".
type listedGroup struct {
	Group        string `json:"group"`
	State        string `json:"state"`
	Type         string `json:"type"`
	ProtocolType string `json:"protocol_type"`
	Coordinator  int32  `json:"coordinator"`
}

func newGroupsListCommand(opts *globalOptions) *cobra.Command {
	var states []string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List consumer groups",
		Example: `  samsa groups list
  samsa groups list --state Stable --state Empty -o json`,
		Args: argsNone,
		RunE: func(cmd *cobra.Command, args []string) error {
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			listed, err := admin.ListGroups(ctx, states...)
			if err != nil {
				return fmt.Errorf("list groups: %w", err)
			}
			groups := make([]listedGroup, 0, len(listed))
			for _, g := range listed.Sorted() {
				groups = append(groups, listedGroup{
					Group:        g.Group,
					State:        g.State,
					Type:         g.GroupType,
					ProtocolType: g.ProtocolType,
					Coordinator:  g.Coordinator,
				})
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, groups)
			}
			t := newTable(out, "GROUP", "STATE", "TYPE", "PROTOCOL-TYPE", "COORDINATOR")
			for _, g := range groups {
				t.row(g.Group, orDash(g.State), orDash(g.Type), orDash(g.ProtocolType), g.Coordinator)
			}
			return t.flush()
		},
	}
	cmd.Flags().StringArrayVar(&states, "state", nil, "only groups in this state (Stable, Empty, PreparingRebalance, ...), repeatable")
	return cmd
}

// describedGroup is the JSON shape of one group in "groups describe".
type describedGroup struct {
	Group       string                    `json:"group"`
	State       string                    `json:"state"`
	Protocol    string                    `json:"protocol"`
	Coordinator int32                     `json:"coordinator"`
	TotalLag    int64                     `json:"total_lag"`
	Members     []describedGroupMember    `json:"members"`
	Partitions  []describedGroupPartition `json:"partitions"`
}

type describedGroupMember struct {
	MemberID   string          `json:"member_id"`
	InstanceID string          `json:"instance_id,omitempty"`
	ClientID   string          `json:"client_id"`
	Host       string          `json:"host"`
	Assignment []assignedTopic `json:"assignment"`
}

type assignedTopic struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// describedGroupPartition is one partition the group consumes or has
// committed; committed_offset and lag are -1 when there is no commit.
type describedGroupPartition struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	CommittedOffset int64  `json:"committed_offset"`
	LogEndOffset    int64  `json:"log_end_offset"`
	Lag             int64  `json:"lag"`
	MemberID        string `json:"member_id,omitempty"`
	Error           string `json:"error,omitempty"`
}

func newGroupsDescribeCommand(opts *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe GROUP...",
		Short: "Show a group's members, assignments, committed offsets and lag",
		Long: `Show each group's state and members with their assigned partitions, and for
every partition the group consumes or has committed: the committed offset,
the log end offset and the lag between them, with the group's total lag.`,
		Example: `  samsa groups describe billing
  samsa groups describe billing audit -o json`,
		Args:              argsAtLeastOne("GROUP"),
		ValidArgsFunction: completeGroupNames(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			lags, err := admin.Lag(ctx, args...)
			if err != nil {
				return fmt.Errorf("describe groups: %w", err)
			}
			var described []describedGroup
			names := append([]string(nil), args...)
			sort.Strings(names)
			for _, name := range names {
				lag, ok := lags[name]
				if !ok {
					return fmt.Errorf("describe group %q: missing from the response", name)
				}
				d, err := buildDescribedGroup(lag)
				if err != nil {
					return fmt.Errorf("describe group %q: %w", name, err)
				}
				described = append(described, d)
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, described)
			}
			for i, d := range described {
				if i > 0 {
					fmt.Fprintln(out)
				}
				if err := printDescribedGroup(out, d); err != nil {
					return err
				}
			}
			return nil
		},
	}
	return cmd
}

func buildDescribedGroup(lag kadm.DescribedGroupLag) (describedGroup, error) {
	if lag.DescribeErr != nil {
		return describedGroup{}, lag.DescribeErr
	}
	if lag.FetchErr != nil {
		return describedGroup{}, fmt.Errorf("fetch committed offsets: %w", lag.FetchErr)
	}
	// Brokers before DescribeGroups v6 answer for an unknown group with
	// state Dead rather than GROUP_ID_NOT_FOUND.
	if lag.State == "Dead" && len(lag.Members) == 0 && len(lag.Lag) == 0 {
		return describedGroup{}, kerr.GroupIDNotFound
	}
	d := describedGroup{
		Group:       lag.Group,
		State:       lag.State,
		Protocol:    lag.Protocol,
		Coordinator: lag.Coordinator.NodeID,
		TotalLag:    lag.Lag.Total(),
		Members:     []describedGroupMember{},
		Partitions:  []describedGroupPartition{},
	}
	for _, m := range lag.Members {
		member := describedGroupMember{
			MemberID:   m.MemberID,
			ClientID:   m.ClientID,
			Host:       m.ClientHost,
			Assignment: []assignedTopic{},
		}
		if m.InstanceID != nil {
			member.InstanceID = *m.InstanceID
		}
		if assigned, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range assigned.Topics {
				partitions := append([]int32(nil), t.Partitions...)
				sort.Slice(partitions, func(i, j int) bool { return partitions[i] < partitions[j] })
				member.Assignment = append(member.Assignment, assignedTopic{Topic: t.Topic, Partitions: partitions})
			}
			sort.Slice(member.Assignment, func(i, j int) bool { return member.Assignment[i].Topic < member.Assignment[j].Topic })
		}
		d.Members = append(d.Members, member)
	}
	for _, l := range lag.Lag.Sorted() {
		p := describedGroupPartition{
			Topic:           l.Topic,
			Partition:       l.Partition,
			CommittedOffset: l.Commit.At,
			LogEndOffset:    l.End.Offset,
			Lag:             l.Lag,
		}
		if l.Member != nil {
			p.MemberID = l.Member.MemberID
		}
		if l.Err != nil {
			p.Error = l.Err.Error()
		}
		d.Partitions = append(d.Partitions, p)
	}
	return d, nil
}

func printDescribedGroup(out io.Writer, d describedGroup) error {
	header := newTable(out)
	header.row("Group:", d.Group)
	header.row("State:", d.State)
	header.row("Protocol:", orDash(d.Protocol))
	header.row("Coordinator:", d.Coordinator)
	header.row("Members:", len(d.Members))
	header.row("Total lag:", d.TotalLag)
	if err := header.flush(); err != nil {
		return err
	}
	if len(d.Members) > 0 {
		fmt.Fprintln(out)
		members := newTable(out, "MEMBER-ID", "CLIENT-ID", "HOST", "ASSIGNMENT")
		for _, m := range d.Members {
			members.row(m.MemberID, m.ClientID, m.Host, orDash(formatAssignment(m.Assignment)))
		}
		if err := members.flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(out)
	partitions := newTable(out, "TOPIC", "PARTITION", "COMMITTED-OFFSET", "LOG-END-OFFSET", "LAG", "MEMBER-ID")
	for _, p := range d.Partitions {
		lag := offsetOrDash(p.Lag)
		if p.Error != "" {
			lag = "error: " + p.Error
		}
		partitions.row(p.Topic, p.Partition, offsetOrDash(p.CommittedOffset), offsetOrDash(p.LogEndOffset), lag, orDash(p.MemberID))
	}
	return partitions.flush()
}

func formatAssignment(assignment []assignedTopic) string {
	parts := make([]string, len(assignment))
	for i, a := range assignment {
		parts[i] = a.Topic + ":" + joinInt32s(a.Partitions)
	}
	return strings.Join(parts, " ")
}

// deletedGroup is one JSON result of "groups delete".
type deletedGroup struct {
	Group   string `json:"group"`
	Deleted bool   `json:"deleted"`
}

func newGroupsDeleteCommand(opts *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete GROUP...",
		Short: "Delete consumer groups and their committed offsets",
		Long:  `Delete consumer groups. A group can only be deleted when it has no members.`,
		Example: `  samsa groups delete billing
  samsa groups delete staging-a staging-b -o json`,
		Args:              argsAtLeastOne("GROUP"),
		ValidArgsFunction: completeGroupNames(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			responses, err := admin.DeleteGroups(ctx, args...)
			if err != nil && !isPartialShardError(err) {
				return fmt.Errorf("delete groups: %w", err)
			}
			names := append([]string(nil), args...)
			sort.Strings(names)
			var results []deletedGroup
			for _, name := range names {
				response, err := responses.On(name, nil)
				if err != nil {
					return fmt.Errorf("delete group %q: missing from the response", name)
				}
				if err := kafkaError(response.Err, response.ErrMessage); err != nil {
					return fmt.Errorf("delete group %q: %w", name, err)
				}
				results = append(results, deletedGroup{Group: name, Deleted: true})
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, results)
			}
			for _, r := range results {
				fmt.Fprintf(out, "Deleted group %q.\n", r.Group)
			}
			return nil
		},
	}
	return cmd
}

// isPartialShardError reports whether err is a kadm *ShardErrors where some
// part of the request still succeeded; the per-item results say which.
func isPartialShardError(err error) bool {
	shardErrors, ok := errors.AsType[*kadm.ShardErrors](err)
	return ok && !shardErrors.AllFailed
}
