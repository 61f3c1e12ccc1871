package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// shareMemberRow is one member of a share group (KIP-932).
type shareMemberRow struct {
	MemberID, ClientID, ClientHost string
	Epoch                          int32
	Subscribed                     []string
	Assigned                       []string
}

// sharePartitionRow is one share-partition: its start offset (the first
// record not yet acknowledged or archived; -1 when never initialized) and
// lag (-1 when the broker does not know it), from DescribeShareGroupOffsets.
type sharePartitionRow struct {
	Topic       string
	Partition   int32
	StartOffset int64
	Lag         int64
	Members     []string
	Error       string
}

type shareGroupData struct {
	Name        string
	State       string
	Epoch       int32
	Assignor    string
	Coordinator int32
	Members     []shareMemberRow
	Partitions  []sharePartitionRow
	Lag         int64
	// Topics are the topics of the share-partitions and of the members'
	// subscriptions, offered by the reset and delete-offsets forms.
	Topics  []string
	Preview []resetRow
	Reset   url.Values
}

// describeShareGroup gathers a share group's page: its state and members
// from ShareGroupDescribe, its share-partitions from
// DescribeShareGroupOffsets (with null topics: those its members subscribe
// to, and those an admin set offsets for).
func describeShareGroup(ctx context.Context, s *session, name string) (shareGroupData, error) {
	data := shareGroupData{Name: name}
	described, err := s.admin.DescribeShareGroups(ctx, name)
	if err != nil {
		return data, fmt.Errorf("describe share group %s: %w", name, err)
	}
	g, ok := described[name]
	if !ok {
		return data, fmt.Errorf("describe share group %s: missing from the response", name)
	}
	if g.Err != nil {
		return data, fmt.Errorf("describe share group %s: %w", name, g.Err)
	}
	data.State, data.Epoch, data.Assignor, data.Coordinator = g.GroupState, g.GroupEpoch, g.Assignor, g.Coordinator.NodeID
	membersOf := map[string][]string{}
	addTopic := func(topic string) {
		if topic != "" && !slices.Contains(data.Topics, topic) {
			data.Topics = append(data.Topics, topic)
		}
	}
	for _, m := range g.Members {
		row := shareMemberRow{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, Epoch: m.MemberEpoch,
			Subscribed: slices.Sorted(slices.Values(m.SubscribedTopicNames))}
		for _, topic := range m.SubscribedTopicNames {
			addTopic(topic)
		}
		m.Assignment.Each(func(topic string, partition int32) {
			key := fmt.Sprintf("%s-%d", topic, partition)
			row.Assigned = append(row.Assigned, key)
			membersOf[key] = append(membersOf[key], m.MemberID)
		})
		slices.Sort(row.Assigned)
		data.Members = append(data.Members, row)
	}
	offsets, err := s.admin.DescribeShareGroupOffsets(ctx, name)
	if err != nil {
		return data, fmt.Errorf("describe share group offsets %s: %w", name, err)
	}
	groupOffsets := offsets[name]
	if groupOffsets.Err != nil {
		return data, fmt.Errorf("describe share group offsets %s: %w", name, groupOffsets.Err)
	}
	for topic, partitions := range groupOffsets.Offsets {
		addTopic(topic)
		for partition, o := range partitions {
			row := sharePartitionRow{Topic: topic, Partition: partition, StartOffset: o.StartOffset, Lag: o.Lag,
				Members: membersOf[fmt.Sprintf("%s-%d", topic, partition)]}
			if o.Err != nil {
				row.Error, row.StartOffset, row.Lag = o.Err.Error(), -1, -1
			}
			if row.Lag > 0 {
				data.Lag += row.Lag
			}
			data.Partitions = append(data.Partitions, row)
		}
	}
	slices.SortFunc(data.Partitions, func(a, b sharePartitionRow) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	slices.Sort(data.Topics)
	return data, nil
}

// asGroupData is the view of a share group that resetTargets computes a
// reset from: the share-partition start offsets stand where a consumer
// group's commits stand.
func (d shareGroupData) asGroupData() groupData {
	view := groupData{Group: groupRow{Name: d.Name, State: d.State}, Topics: d.Topics}
	for _, p := range d.Partitions {
		view.Lag = append(view.Lag, lagRow{Topic: p.Topic, Partition: p.Partition, Committed: p.StartOffset})
	}
	return view
}

func shareGroupTitle(name string) string { return "Share group " + name }

func (c *Console) shareGroupPage(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	data, err := describeShareGroup(ctx, s, r.PathValue("group"))
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, err)
		return
	}
	c.render(w, r, http.StatusOK, "share_group", page{Title: shareGroupTitle(data.Name), Nav: "groups", Data: data})
}

// resetShareOffsets previews (the default) or applies a reset of a share
// group's start offsets through AlterShareGroupOffsets, which Kafka
// accepts only while the group has no members (kafka-share-groups.sh
// --reset-offsets); the console refuses it first, and the broker's
// NON_EMPTY_GROUP would refuse it anyway.
func (c *Console) resetShareOffsets(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	name := r.PathValue("group")
	data, err := describeShareGroup(ctx, s, name)
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, err)
		return
	}
	_ = r.ParseForm()
	data.Reset = r.PostForm
	title := shareGroupTitle(name)
	rows, err := resetTargets(ctx, s, data.asGroupData(), r.PostForm)
	if err != nil {
		c.render(w, r, http.StatusBadRequest, "share_group", page{Title: title, Nav: "groups", Error: err.Error(), Data: data})
		return
	}
	data.Preview = rows
	if r.PostFormValue("action") != "apply" {
		c.render(w, r, http.StatusOK, "share_group", page{Title: title, Nav: "groups",
			Notice: "Dry run: nothing was changed. Apply to set these start offsets.", Data: data})
		return
	}
	if len(data.Members) > 0 {
		c.render(w, r, http.StatusConflict, "share_group", page{Title: title, Nav: "groups", Data: data,
			Error: fmt.Sprintf("share group %s has %d members: offsets can only be reset while the group is empty; stop its consumers first", name, len(data.Members))})
		return
	}
	offsets := kadm.Offsets{}
	for _, row := range rows {
		offsets.AddOffset(row.Topic, row.Partition, row.Target, -1)
	}
	responses, err := s.admin.AlterShareGroupOffsets(ctx, name, offsets)
	if err == nil {
		err = responses.Error()
	}
	if err != nil {
		c.render(w, r, http.StatusBadGateway, "share_group", page{Title: title, Nav: "groups", Data: data, Error: "alter share group offsets: " + err.Error()})
		return
	}
	redirect(w, r, "/share-groups/"+url.PathEscape(name), fmt.Sprintf("reset %d share-partitions", len(rows)))
}

// deleteShareOffsets deletes the share-partition state of one topic of a
// share group (DeleteShareGroupOffsets); its next consumer starts afresh
// at share.auto.offset.reset. Kafka refuses it while the group has members.
func (c *Console) deleteShareOffsets(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	name := r.PathValue("group")
	topic := strings.TrimSpace(r.PostFormValue("topic"))
	if topic == "" {
		c.fail(w, r, http.StatusBadRequest, errors.New("delete share group offsets: choose a topic"))
		return
	}
	responses, err := s.admin.DeleteShareGroupOffsets(ctx, name, topic)
	if err == nil {
		err = responses.Error()
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, fmt.Errorf("delete share group offsets of %s on %s: %w", name, topic, err))
		return
	}
	redirect(w, r, "/share-groups/"+url.PathEscape(name), fmt.Sprintf("deleted the offsets of %s on %s", name, topic))
}

// shareGroupSummaries fills the members and lag of the share groups among
// rows, with one ShareGroupDescribe and one DescribeShareGroupOffsets for
// all of them. DescribeGroups does not describe share groups.
func shareGroupSummaries(ctx context.Context, s *session, rows []groupRow) {
	var names []string
	for _, row := range rows {
		if row.Type == "share" {
			names = append(names, row.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	described, _ := s.admin.DescribeShareGroups(ctx, names...)
	offsets, _ := s.admin.DescribeShareGroupOffsets(ctx, names...)
	for i := range rows {
		if rows[i].Type != "share" {
			continue
		}
		rows[i].Error, rows[i].Members, rows[i].Lag = "", 0, 0
		if g, ok := described[rows[i].Name]; ok && g.Err == nil {
			rows[i].Members = len(g.Members)
		} else if ok {
			rows[i].Error = g.Err.Error()
		}
		for _, partitions := range offsets[rows[i].Name].Offsets {
			for _, o := range partitions {
				if o.Err == nil && o.Lag > 0 {
					rows[i].Lag += o.Lag
				}
			}
		}
	}
}
