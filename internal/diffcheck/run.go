package diffcheck

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Side is one of the two nodes under comparison.
type Side struct {
	Name string
	conn *Conn
	// versions are the API versions the node advertises, by key.
	versions map[int16][2]int16
	topicIDs map[string][16]byte
}

// NewSide connects to a node and reads the versions it advertises.
func NewSide(name, addr string) (*Side, error) {
	conn, err := Dial(addr)
	if err != nil {
		return nil, err
	}
	s := &Side{Name: name, conn: conn, versions: map[int16][2]int16{}, topicIDs: map[string][16]byte{}}
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-diffcheck", "1.0"
	resp, err := conn.RoundTrip(req)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: ApiVersions: %w", name, err)
	}
	for _, key := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
		s.versions[key.ApiKey] = [2]int16{key.MinVersion, key.MaxVersion}
	}
	return s, nil
}

// Close closes the side's connection.
func (s *Side) Close() error { return s.conn.Close() }

// TopicID is the node's id of a topic, from Metadata, or zero if it has
// none (an unknown topic then gets UNKNOWN_TOPIC_ID, as it should).
func (s *Side) TopicID(name string) [16]byte {
	if id, ok := s.topicIDs[name]; ok {
		return id
	}
	req := metadataRequest(12, name).(*kmsg.MetadataRequest)
	req.SetVersion(min(12, s.versions[3][1]))
	resp, err := s.conn.RoundTrip(req)
	if err != nil {
		return [16]byte{}
	}
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		if t.ErrorCode == 0 {
			s.topicIDs[name] = t.TopicID
			return t.TopicID
		}
	}
	return [16]byte{}
}

// send sends req at version and returns the response or the error as text
// the comparison can hold.
func (s *Side) send(req kmsg.Request, version int16) (kmsg.Response, error) {
	req.SetVersion(version)
	return s.conn.RoundTrip(req)
}

// Outcome is one case at one version.
type Outcome struct {
	Key     int16
	Version int16
	Case    string
	// Differences is empty when the answers match.
	Differences []string
}

// Versions are the ranges each side advertises for one key; a side that
// does not serve the key has ok false.
type Versions struct {
	Key                  int16
	Kafka, Samsa         [2]int16
	InKafka, InSamsa     bool
	CommonMin, CommonMax int16
}

// CommonVersions lists every key either side advertises, with the range
// both serve that kmsg can also encode.
func CommonVersions(kafka, samsa *Side) []Versions {
	var keys []int16
	for key := range kafka.versions {
		keys = append(keys, key)
	}
	for key := range samsa.versions {
		if _, ok := kafka.versions[key]; !ok {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	var out []Versions
	for _, key := range keys {
		k, inKafka := kafka.versions[key]
		s, inSamsa := samsa.versions[key]
		v := Versions{Key: key, Kafka: k, Samsa: s, InKafka: inKafka, InSamsa: inSamsa, CommonMin: -1, CommonMax: -1}
		if inKafka && inSamsa {
			lo, hi := max(k[0], s[0]), min(k[1], s[1])
			if req := kmsg.RequestForKey(key); req != nil {
				hi = min(hi, req.MaxVersion())
			}
			if lo <= hi {
				v.CommonMin, v.CommonMax = lo, hi
			}
		}
		out = append(out, v)
	}
	return out
}

// Run sends every case at the versions it applies to (all common
// versions, or only the oldest and newest when short) to both sides and
// compares the answers.
func Run(kafka, samsa *Side, cases []Case, short bool) ([]Outcome, error) {
	common := map[int16]Versions{}
	for _, v := range CommonVersions(kafka, samsa) {
		common[v.Key] = v
	}
	// Every key both serve that no case covers is sent kmsg's default
	// request: empty or zero input, a bad input of its own.
	covered := map[int16]bool{}
	for _, c := range cases {
		covered[c.Key] = true
	}
	for _, v := range CommonVersions(kafka, samsa) {
		if v.CommonMin >= 0 && !covered[v.Key] && kmsg.RequestForKey(v.Key) != nil {
			key := v.Key
			cases = append(cases, Case{Key: key, Name: "default (empty) request", Request: func(*Side, int16) kmsg.Request {
				return kmsg.RequestForKey(key)
			}})
		}
	}
	var outcomes []Outcome
	for _, c := range cases {
		v, ok := common[c.Key]
		if !ok || v.CommonMin < 0 {
			continue
		}
		for version := v.CommonMin; version <= v.CommonMax; version++ {
			if short && version != v.CommonMin && version != v.CommonMax {
				continue
			}
			if !c.appliesTo(version) {
				continue
			}
			if c.Setup != nil {
				for _, side := range []*Side{kafka, samsa} {
					for _, req := range c.Setup(version) {
						if _, err := side.send(req, common[req.Key()].CommonMax); err != nil {
							return outcomes, fmt.Errorf("%s: setup of %s %q v%d: %w", side.Name, kmsg.NameForKey(c.Key), c.Name, version, err)
						}
					}
				}
			}
			kafkaResp, kafkaErr := kafka.send(c.Request(kafka, version), version)
			samsaResp, samsaErr := samsa.send(c.Request(samsa, version), version)
			outcome := Outcome{Key: c.Key, Version: version, Case: c.Name}
			switch {
			case kafkaErr != nil || samsaErr != nil:
				if !(errors.Is(kafkaErr, ErrClosed) && errors.Is(samsaErr, ErrClosed)) {
					outcome.Differences = []string{fmt.Sprintf("transport: kafka=%s samsa=%s", errText(kafkaErr), errText(samsaErr))}
				}
			default:
				normalize(reflect.ValueOf(kafkaResp))
				normalize(reflect.ValueOf(samsaResp))
				outcome.Differences = Compare(c.Key, kafkaResp, samsaResp)
			}
			outcomes = append(outcomes, outcome)
		}
	}
	return outcomes, nil
}

func errText(err error) string {
	if err == nil {
		return "answered"
	}
	return err.Error()
}
