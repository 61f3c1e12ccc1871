package cli

import (
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// describedShareGroup is the JSON shape of one share group (KIP-932) in
// "groups describe-share".
type describedShareGroup struct {
	Group       string                         `json:"group"`
	State       string                         `json:"state"`
	Epoch       int32                          `json:"epoch"`
	Assignor    string                         `json:"assignor"`
	Coordinator int32                          `json:"coordinator"`
	Members     []describedShareGroupMember    `json:"members"`
	Partitions  []describedShareGroupPartition `json:"partitions"`
}

type describedShareGroupMember struct {
	MemberID   string          `json:"member_id"`
	Epoch      int32           `json:"epoch"`
	ClientID   string          `json:"client_id"`
	Host       string          `json:"host"`
	Assignment []assignedTopic `json:"assignment"`
}

// describedShareGroupPartition is a share-partition's start offset (-1
// when never started) and lag (-1 when unknown).
type describedShareGroupPartition struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	StartOffset int64  `json:"start_offset"`
	Lag         int64  `json:"lag"`
	Error       string `json:"error,omitempty"`
}

func newGroupsDescribeShareCommand(opts *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "describe-share GROUP...",
		Short: "Show a share group's members, assignments and share-partition start offsets",
		Long: `Show each share group's (KIP-932) state, epoch and members with their assigned
partitions, and for each partition its members subscribe to the share-partition
start offset (the first record not yet acknowledged or archived) and lag.`,
		Example: `  samsa groups describe-share jobs
  samsa groups describe-share jobs -o json`,
		Args:              argsAtLeastOne("GROUP"),
		ValidArgsFunction: completeGroupNames(opts),
		RunE: func(cmd *cobra.Command, args []string) error {
			admin, ctx, done, err := opts.adminSession(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			groups, err := admin.DescribeShareGroups(ctx, args...)
			if err != nil {
				return fmt.Errorf("describe share groups: %w", err)
			}
			offsets, err := admin.DescribeShareGroupOffsets(ctx, args...)
			if err != nil {
				return fmt.Errorf("describe share group offsets: %w", err)
			}
			names := append([]string(nil), args...)
			sort.Strings(names)
			var described []describedShareGroup
			for _, name := range names {
				g, ok := groups[name]
				if !ok {
					return fmt.Errorf("describe share group %q: missing from the response", name)
				}
				if g.Err != nil {
					return fmt.Errorf("describe share group %q: %w", name, g.Err)
				}
				described = append(described, buildDescribedShareGroup(g, offsets[name]))
			}
			out := cmd.OutOrStdout()
			if opts.jsonOutput() {
				return writeJSON(out, described)
			}
			for i, d := range described {
				if i > 0 {
					fmt.Fprintln(out)
				}
				if err := printDescribedShareGroup(out, d); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func buildDescribedShareGroup(g kadm.DescribedShareGroup, offsets kadm.DescribedShareGroupOffsets) describedShareGroup {
	d := describedShareGroup{Group: g.GroupID, State: g.GroupState, Epoch: g.GroupEpoch, Assignor: g.Assignor, Coordinator: g.Coordinator.NodeID,
		Members: []describedShareGroupMember{}, Partitions: []describedShareGroupPartition{}}
	for _, m := range g.Members {
		member := describedShareGroupMember{MemberID: m.MemberID, Epoch: m.MemberEpoch, ClientID: m.ClientID, Host: m.ClientHost, Assignment: []assignedTopic{}}
		for topic, partitions := range m.Assignment {
			ps := make([]int32, 0, len(partitions))
			for p := range partitions {
				ps = append(ps, p)
			}
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
			member.Assignment = append(member.Assignment, assignedTopic{Topic: topic, Partitions: ps})
		}
		sort.Slice(member.Assignment, func(i, j int) bool { return member.Assignment[i].Topic < member.Assignment[j].Topic })
		d.Members = append(d.Members, member)
	}
	for topic, ps := range offsets.Offsets {
		for p, o := range ps {
			row := describedShareGroupPartition{Topic: topic, Partition: p, StartOffset: o.StartOffset, Lag: o.Lag}
			if o.Err != nil {
				row.Error = o.Err.Error()
			}
			d.Partitions = append(d.Partitions, row)
		}
	}
	sort.Slice(d.Partitions, func(i, j int) bool {
		a, b := d.Partitions[i], d.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return d
}

func printDescribedShareGroup(out io.Writer, d describedShareGroup) error {
	header := newTable(out)
	header.row("Group:", d.Group)
	header.row("State:", d.State)
	header.row("Epoch:", d.Epoch)
	header.row("Assignor:", orDash(d.Assignor))
	header.row("Coordinator:", d.Coordinator)
	header.row("Members:", len(d.Members))
	if err := header.flush(); err != nil {
		return err
	}
	if len(d.Members) > 0 {
		fmt.Fprintln(out)
		members := newTable(out, "MEMBER-ID", "EPOCH", "CLIENT-ID", "HOST", "ASSIGNMENT")
		for _, m := range d.Members {
			members.row(m.MemberID, m.Epoch, m.ClientID, m.Host, orDash(formatAssignment(m.Assignment)))
		}
		if err := members.flush(); err != nil {
			return err
		}
	}
	if len(d.Partitions) > 0 {
		fmt.Fprintln(out)
		partitions := newTable(out, "TOPIC", "PARTITION", "START-OFFSET", "LAG", "ERROR")
		for _, p := range d.Partitions {
			partitions.row(p.Topic, p.Partition, p.StartOffset, p.Lag, orDash(p.Error))
		}
		return partitions.flush()
	}
	return nil
}
