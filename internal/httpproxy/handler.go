package httpproxy

import (
	"context"
	"net/http"

	"github.com/samsa-streaming/samsa/internal/httpserve"
)

// v2 body types: the consumer routes take application/vnd.kafka.v2+json
// (and plain JSON); the produce routes check their format themselves.
var v2BodyTypes = []string{contentTypeV2, "application/vnd.kafka+json", "application/json", "application/octet-stream"}

var v3BodyTypes = []string{"application/json"}

// Handler serves the v2 and v3 APIs.
func (p *Proxy) Handler() http.Handler {
	mux := http.NewServeMux()
	v2 := func(pattern string, h handlerFunc) { mux.HandleFunc(pattern, p.route(contentTypeV2, v2BodyTypes, h)) }
	v2Any := func(pattern string, h handlerFunc) { mux.HandleFunc(pattern, p.route(contentTypeV2, nil, h)) }
	v3 := func(pattern string, h handlerFunc) { mux.HandleFunc(pattern, p.route(contentTypeV3, v3BodyTypes, h)) }

	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		httpserve.WriteJSON(w, http.StatusOK, contentTypeV2, map[string]any{})
	})
	v2("GET /topics", p.listTopicsV2)
	v2("GET /topics/{topic}", p.getTopicV2)
	v2Any("POST /topics/{topic}", p.produceV2)
	v2("GET /topics/{topic}/partitions", p.listPartitionsV2)
	v2("GET /topics/{topic}/partitions/{partition}", p.getPartitionV2)
	v2Any("POST /topics/{topic}/partitions/{partition}", p.produceV2)
	v2("GET /topics/{topic}/partitions/{partition}/offsets", p.partitionOffsetsV2)
	v2("GET /brokers", p.listBrokersV2)

	v2("POST /consumers/{group}", p.createConsumer)
	instance := "/consumers/{group}/instances/{instance}"
	v2("DELETE "+instance, p.deleteConsumer)
	v2("POST "+instance+"/subscription", p.subscribe)
	v2("GET "+instance+"/subscription", p.getSubscription)
	v2("DELETE "+instance+"/subscription", p.unsubscribe)
	v2("POST "+instance+"/assignments", p.assign)
	v2("GET "+instance+"/assignments", p.getAssignments)
	v2("POST "+instance+"/offsets", p.commitOffsets)
	v2("GET "+instance+"/offsets", p.committedOffsets)
	v2("POST "+instance+"/positions", p.seek)
	v2("POST "+instance+"/positions/beginning", p.seekToEdge(false))
	v2("POST "+instance+"/positions/end", p.seekToEdge(true))
	v2Any("GET "+instance+"/records", p.records)

	cluster := "/v3/clusters/{cluster}"
	v3("GET /v3/clusters", p.listClustersV3)
	v3("GET "+cluster, p.getClusterV3)
	v3("GET "+cluster+"/brokers", p.listBrokersV3)
	v3("GET "+cluster+"/brokers/{broker}", p.getBrokerV3)
	v3("GET "+cluster+"/topics", p.listTopicsV3)
	v3("POST "+cluster+"/topics", p.createTopicV3)
	v3("GET "+cluster+"/topics/{topic}", p.getTopicV3)
	v3("DELETE "+cluster+"/topics/{topic}", p.deleteTopicV3)
	v3("GET "+cluster+"/topics/{topic}/partitions", p.listPartitionsV3)
	v3("GET "+cluster+"/topics/{topic}/partitions/{partition}", p.getPartitionV3)
	v3("GET "+cluster+"/topics/{topic}/configs", p.listTopicConfigsV3)
	v3("POST "+cluster+"/topics/{topic}/configs:alter", p.alterTopicConfigsV3)
	v3("GET "+cluster+"/topics/{topic}/configs/{name}", p.getTopicConfigV3)
	v3("PUT "+cluster+"/topics/{topic}/configs/{name}", p.setTopicConfigV3)
	v3("DELETE "+cluster+"/topics/{topic}/configs/{name}", p.resetTopicConfigV3)
	v3("GET "+cluster+"/consumer-groups", p.listGroupsV3)
	v3("GET "+cluster+"/consumer-groups/{group}", p.getGroupV3)
	v3("GET "+cluster+"/consumer-groups/{group}/consumers", p.listGroupConsumersV3)
	v3("GET "+cluster+"/consumer-groups/{group}/lags", p.listLagsV3)
	v3("GET "+cluster+"/consumer-groups/{group}/lag-summary", p.lagSummaryV3)
	v3("GET "+cluster+"/acls", p.listACLsV3)
	v3("POST "+cluster+"/acls", p.createACLV3)
	v3("DELETE "+cluster+"/acls", p.deleteACLsV3)
	mux.HandleFunc("POST "+cluster+"/topics/{topic}/records", p.streamRoute(p.produceV3))

	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		httpserve.WriteError(w, http.StatusNotFound, contentTypeV2, 404, "HTTP 404 Not Found")
	})
	return mux
}

// streamRoute is route for a handler that writes its own answer (the v3
// records stream): the session is held, and the request timeout does not
// apply to the body, only each Kafka operation's own.
func (p *Proxy) streamRoute(h func(w http.ResponseWriter, r *request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := checkAccept(r, contentTypeV3, v3BodyTypes); err != nil {
			writeError(w, contentTypeV3, err)
			return
		}
		identity, err := p.config.Identify(r)
		if err != nil {
			writeError(w, contentTypeV3, newError(http.StatusUnauthorized, 40101, "Unauthorized"))
			return
		}
		session, err := p.sessions.acquire(identity)
		if err != nil {
			writeError(w, contentTypeV3, kafkaError(err))
			return
		}
		defer p.sessions.release(session)
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		h(w, &request{Request: r.WithContext(ctx), session: session, ctx: ctx})
	}
}
