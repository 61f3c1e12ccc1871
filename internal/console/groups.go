package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

type groupRow struct {
	Name    string
	Type    string
	State   string
	Members int
	Lag     int64
	Error   string
}

type groupsData struct {
	Groups []groupRow
	Page   int
	Pages  int
	Total  int
	Search string
}

type lagRow struct {
	Topic     string
	Partition int32
	Committed int64
	End       int64
	Lag       int64 // -1 without a commit
	Member    string
	Error     string
}

type memberRow struct {
	MemberID, InstanceID, ClientID, ClientHost string
	Assigned                                   []string
}

type resetRow struct {
	Topic     string
	Partition int32
	Current   int64
	Target    int64
}

type groupData struct {
	Group    groupRow
	Protocol string
	Members  []memberRow
	Lag      []lagRow
	Topics   []string
	Preview  []resetRow
	Reset    url.Values
}

// groupLags is the lag of each partition of each group, computed as kadm
// computes it: end offset minus the commit, and for a partition of a
// committed topic without a commit, end minus start. It sends one batched
// ListOffsets for the end offsets of every topic the groups committed to,
// and one for start offsets only when some partition has no commit.
func groupLags(ctx context.Context, s *session, groups []string) (map[string][]lagRow, error) {
	fetched := s.admin.FetchManyOffsets(ctx, groups...)
	topics := map[string]bool{}
	for _, response := range fetched {
		for topic := range response.Fetched {
			topics[topic] = true
		}
	}
	out := map[string][]lagRow{}
	if len(topics) == 0 {
		return out, nil
	}
	names := make([]string, 0, len(topics))
	for topic := range topics {
		names = append(names, topic)
	}
	slices.Sort(names)
	ends, err := s.admin.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	var starts kadm.ListedOffsets
	startsWanted := map[string]bool{}
	for group, response := range fetched {
		if response.Err != nil {
			out[group] = append(out[group], lagRow{Error: response.Err.Error()})
			continue
		}
		ends.Each(func(end kadm.ListedOffset) {
			if _, committedTopic := response.Fetched[end.Topic]; !committedTopic {
				return
			}
			row := lagRow{Topic: end.Topic, Partition: end.Partition, Committed: -1, Lag: -1, End: end.Offset}
			o, committed := response.Fetched.Lookup(end.Topic, end.Partition)
			switch {
			case committed && o.Err != nil:
				row.Error = o.Err.Error()
			case end.Err != nil:
				row.Error = end.Err.Error()
			case committed && o.At >= 0:
				row.Committed = o.At
				row.Lag = max(end.Offset-o.At, 0)
			default:
				startsWanted[end.Topic] = true
			}
			out[group] = append(out[group], row)
		})
	}
	if len(startsWanted) > 0 {
		var startTopics []string
		for topic := range startsWanted {
			startTopics = append(startTopics, topic)
		}
		if starts, err = s.admin.ListStartOffsets(ctx, startTopics...); err != nil {
			return nil, fmt.Errorf("list start offsets: %w", err)
		}
	}
	for group, rows := range out {
		for i := range rows {
			if rows[i].Committed < 0 && rows[i].Error == "" {
				if start, ok := starts.Lookup(rows[i].Topic, rows[i].Partition); ok && start.Err == nil {
					rows[i].Lag = max(rows[i].End-start.Offset, 0)
				}
			}
		}
		slices.SortFunc(rows, func(a, b lagRow) int {
			if c := strings.Compare(a.Topic, b.Topic); c != 0 {
				return c
			}
			return int(a.Partition - b.Partition)
		})
		out[group] = rows
	}
	return out, nil
}

func totalLag(rows []lagRow) int64 {
	var total int64
	for _, row := range rows {
		if row.Lag > 0 {
			total += row.Lag
		}
	}
	return total
}

func (c *Console) groupsPage(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	listed, err := s.admin.ListGroups(ctx)
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, fmt.Errorf("list groups: %w", err))
		return
	}
	data := groupsData{Search: strings.TrimSpace(r.URL.Query().Get("search"))}
	var names []string
	for name := range listed {
		if data.Search == "" || strings.Contains(name, data.Search) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	data.Total = len(names)
	data.Pages = max((len(names)+DefaultGroupsPerPage-1)/DefaultGroupsPerPage, 1)
	data.Page, _ = strconv.Atoi(r.URL.Query().Get("page"))
	data.Page = min(max(data.Page, 1), data.Pages)
	pageNames := names[min((data.Page-1)*DefaultGroupsPerPage, len(names)):min(data.Page*DefaultGroupsPerPage, len(names))]
	described, _ := s.admin.DescribeGroups(ctx, pageNames...)
	var consumerNames []string
	for _, name := range pageNames {
		if listed[name].GroupType == "consumer" {
			consumerNames = append(consumerNames, name)
		}
	}
	var consumerGroups kadm.DescribedConsumerGroups
	if len(consumerNames) > 0 {
		consumerGroups, _ = s.admin.DescribeConsumerGroups(ctx, consumerNames...)
	}
	lags, err := groupLags(ctx, s, pageNames)
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, err)
		return
	}
	for _, name := range pageNames {
		row := groupRow{Name: name, Type: listed[name].GroupType, State: listed[name].State, Lag: totalLag(lags[name])}
		if row.Type == "" {
			row.Type = "classic"
		}
		if cg, ok := consumerGroups[name]; ok && cg.Err == nil {
			row.Members = len(cg.Members)
		} else if d, ok := described[name]; ok {
			row.Members = len(d.Members)
			if d.Err != nil {
				row.Error = d.Err.Error()
			}
		}
		data.Groups = append(data.Groups, row)
	}
	shareGroupSummaries(ctx, s, data.Groups)
	c.render(w, r, http.StatusOK, "groups", page{Title: "Consumer groups", Nav: "groups", Data: data})
}

// describeGroup gathers one group's page: a classic group through
// DescribeGroups, a consumer-protocol (KIP-848) group, which DescribeGroups
// v6 refuses as "not a classic group", through ConsumerGroupDescribe.
func describeGroup(ctx context.Context, s *session, name string) (groupData, error) {
	data := groupData{Group: groupRow{Name: name}}
	memberOf := map[string]string{}
	described, err := s.admin.DescribeGroups(ctx, name)
	if err != nil {
		return data, fmt.Errorf("describe group %s: %w", name, err)
	}
	d := described[name]
	if d.Err != nil {
		consumer, consumerErr := s.admin.DescribeConsumerGroups(ctx, name)
		cg, ok := consumer[name]
		if consumerErr != nil || !ok || cg.Err != nil {
			return data, fmt.Errorf("describe group %s: %w", name, d.Err)
		}
		data.Group.State, data.Group.Type, data.Protocol, data.Group.Members = cg.State, "consumer (KIP-848)", cg.AssignorName, len(cg.Members)
		for _, m := range cg.Members {
			row := memberRow{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost}
			if m.InstanceID != nil {
				row.InstanceID = *m.InstanceID
			}
			m.Assignment.Each(func(topic string, partition int32) {
				key := fmt.Sprintf("%s-%d", topic, partition)
				row.Assigned = append(row.Assigned, key)
				memberOf[key] = m.MemberID
			})
			slices.Sort(row.Assigned)
			data.Members = append(data.Members, row)
		}
	} else {
		data.Group.State, data.Group.Type, data.Protocol, data.Group.Members = d.State, d.ProtocolType, d.Protocol, len(d.Members)
		for _, m := range d.Members {
			row := memberRow{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost}
			if m.InstanceID != nil {
				row.InstanceID = *m.InstanceID
			}
			if assignment, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range assignment.Topics {
					for _, p := range t.Partitions {
						row.Assigned = append(row.Assigned, fmt.Sprintf("%s-%d", t.Topic, p))
						memberOf[fmt.Sprintf("%s-%d", t.Topic, p)] = m.MemberID
					}
				}
			}
			data.Members = append(data.Members, row)
		}
	}
	lags, err := groupLags(ctx, s, []string{name})
	if err != nil {
		return data, err
	}
	data.Lag = lags[name]
	for i := range data.Lag {
		data.Lag[i].Member = memberOf[fmt.Sprintf("%s-%d", data.Lag[i].Topic, data.Lag[i].Partition)]
		if !slices.Contains(data.Topics, data.Lag[i].Topic) && data.Lag[i].Topic != "" {
			data.Topics = append(data.Topics, data.Lag[i].Topic)
		}
	}
	data.Group.Lag = totalLag(data.Lag)
	return data, nil
}

func (c *Console) groupPage(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	data, err := describeGroup(ctx, s, r.PathValue("group"))
	if err != nil {
		if shares, shareErr := s.admin.DescribeShareGroups(ctx, data.Group.Name); shareErr == nil && shares[data.Group.Name].Err == nil {
			http.Redirect(w, r, "/share-groups/"+url.PathEscape(data.Group.Name), http.StatusSeeOther)
			return
		}
		c.fail(w, r, http.StatusBadGateway, err)
		return
	}
	c.render(w, r, http.StatusOK, "group", page{Title: "Group " + data.Group.Name, Nav: "groups", Data: data})
}

// resetTargets computes the offsets a reset would commit: for each
// partition of the chosen topic (or every topic the group committed to),
// to earliest, latest, the first offset at a timestamp, or an offset
// clamped into the log, as kafka-consumer-groups.sh --reset-offsets does.
func resetTargets(ctx context.Context, s *session, data groupData, form url.Values) ([]resetRow, error) {
	topic := strings.TrimSpace(form.Get("topic"))
	topics := data.Topics
	if topic != "" {
		topics = []string{topic}
	}
	if len(topics) == 0 {
		return nil, errors.New("the group has no offsets to reset; choose a topic")
	}
	starts, err := s.admin.ListStartOffsets(ctx, topics...)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := s.admin.ListEndOffsets(ctx, topics...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	var byTime kadm.ListedOffsets
	var offset int64
	switch to := form.Get("to"); to {
	case "earliest", "latest":
	case "timestamp":
		timestampMs, err := parseTimestamp(form.Get("value"))
		if err != nil {
			return nil, err
		}
		if byTime, err = s.admin.ListOffsetsAfterMilli(ctx, timestampMs, topics...); err == nil {
			err = byTime.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("list offsets at %d: %w", timestampMs, err)
		}
	case "offset":
		raw := strings.TrimSpace(form.Get("value"))
		if offset, err = strconv.ParseInt(raw, 10, 64); err != nil || offset < 0 {
			return nil, fmt.Errorf("offset %q: expected a whole number, 0 or more", raw)
		}
	default:
		return nil, fmt.Errorf("reset to %q: expected earliest, latest, timestamp or offset", to)
	}
	current := map[string]int64{}
	for _, row := range data.Lag {
		current[fmt.Sprintf("%s-%d", row.Topic, row.Partition)] = row.Committed
	}
	var rows []resetRow
	ends.Each(func(end kadm.ListedOffset) {
		start, _ := starts.Lookup(end.Topic, end.Partition)
		row := resetRow{Topic: end.Topic, Partition: end.Partition, Current: -1}
		if committed, ok := current[fmt.Sprintf("%s-%d", end.Topic, end.Partition)]; ok {
			row.Current = committed
		}
		switch form.Get("to") {
		case "earliest":
			row.Target = start.Offset
		case "latest":
			row.Target = end.Offset
		case "timestamp":
			at, _ := byTime.Lookup(end.Topic, end.Partition)
			row.Target = at.Offset
			if at.Offset < 0 {
				row.Target = end.Offset
			}
		case "offset":
			row.Target = min(max(offset, start.Offset), end.Offset)
		}
		rows = append(rows, row)
	})
	slices.SortFunc(rows, func(a, b resetRow) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return rows, nil
}

func (c *Console) resetOffsets(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	name := r.PathValue("group")
	data, err := describeGroup(ctx, s, name)
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, err)
		return
	}
	_ = r.ParseForm()
	data.Reset = r.PostForm
	rows, err := resetTargets(ctx, s, data, r.PostForm)
	if err != nil {
		c.render(w, r, http.StatusBadRequest, "group", page{Title: "Group " + name, Nav: "groups", Error: err.Error(), Data: data})
		return
	}
	data.Preview = rows
	if r.PostFormValue("action") != "apply" {
		c.render(w, r, http.StatusOK, "group", page{Title: "Group " + name, Nav: "groups",
			Notice: "Dry run: nothing was committed. Apply to commit these offsets.", Data: data})
		return
	}
	if data.Group.State != "Empty" && data.Group.State != "Dead" {
		c.render(w, r, http.StatusConflict, "group", page{Title: "Group " + name, Nav: "groups", Data: data,
			Error: fmt.Sprintf("group %s is %s: offsets can only be reset while the group is inactive; stop its consumers first", name, data.Group.State)})
		return
	}
	offsets := kadm.Offsets{}
	for _, row := range rows {
		offsets.AddOffset(row.Topic, row.Partition, row.Target, -1)
	}
	responses, err := s.admin.CommitOffsets(ctx, name, offsets)
	if err == nil {
		err = responses.Error()
	}
	if err != nil {
		c.render(w, r, http.StatusBadGateway, "group", page{Title: "Group " + name, Nav: "groups", Data: data, Error: "commit offsets: " + err.Error()})
		return
	}
	redirect(w, r, "/groups/"+url.PathEscape(name), fmt.Sprintf("reset %d partitions", len(rows)))
}

func (c *Console) deleteGroup(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	name := r.PathValue("group")
	response, err := s.admin.DeleteGroup(ctx, name)
	if err == nil {
		err = response.Err
	}
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, fmt.Errorf("delete group %s: %w", name, err))
		return
	}
	redirect(w, r, "/groups", "deleted group "+name)
}
