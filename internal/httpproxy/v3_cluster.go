package httpproxy

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
)

// clusterID asks the cluster its id.
func clusterID(r *request) (string, kadm.Metadata, error) {
	metadata, err := r.session.admin.BrokerMetadata(r.ctx)
	if err != nil {
		return "", kadm.Metadata{}, err
	}
	return metadata.Cluster, metadata, nil
}

// checkCluster answers 404 unless the path names this cluster.
func checkCluster(r *request) (string, error) {
	r.session.metadata.Lock()
	id := r.session.metadata.clusterID
	r.session.metadata.Unlock()
	if id == "" {
		var err error
		if id, _, err = clusterID(r); err != nil {
			return "", err
		}
		r.session.metadata.Lock()
		r.session.metadata.clusterID = id
		r.session.metadata.Unlock()
	}
	if r.PathValue("cluster") != id {
		return "", newError(http.StatusNotFound, 404, "Cluster %s cannot be found.", r.PathValue("cluster"))
	}
	return id, nil
}

func clusterOfV3(r *request, id string, metadata kadm.Metadata) map[string]any {
	self := clusterURL(r, id)
	cluster := map[string]any{
		"kind": "KafkaCluster", "metadata": resourceMetadata{Self: self, ResourceName: crn("kafka", id)},
		"cluster_id": id, "controller": nil,
		"acls": related{self + "/acls"}, "brokers": related{self + "/brokers"},
		"broker_configs": related{self + "/broker-configs"}, "consumer_groups": related{self + "/consumer-groups"},
		"topics": related{self + "/topics"}, "partition_reassignments": related{self + "/topics/-/partitions/-/reassignment"},
	}
	if metadata.Controller >= 0 {
		cluster["controller"] = related{self + "/brokers/" + strconv.Itoa(int(metadata.Controller))}
	}
	return cluster
}

// GET /v3/clusters: this one cluster.
func (p *Proxy) listClustersV3(r *request) (int, any, error) {
	id, metadata, err := clusterID(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, list(r, "KafkaClusterList", []any{clusterOfV3(r, id, metadata)}), nil
}

// GET /v3/clusters/{cluster_id}.
func (p *Proxy) getClusterV3(r *request) (int, any, error) {
	id, metadata, err := clusterID(r)
	if err != nil {
		return 0, nil, err
	}
	if r.PathValue("cluster") != id {
		return 0, nil, newError(http.StatusNotFound, 404, "Cluster %s cannot be found.", r.PathValue("cluster"))
	}
	return http.StatusOK, clusterOfV3(r, id, metadata), nil
}

func brokerOfV3(r *request, id string, broker kadm.BrokerDetail) map[string]any {
	brokerID := strconv.Itoa(int(broker.NodeID))
	self := clusterURL(r, id) + "/brokers/" + brokerID
	return map[string]any{
		"kind": "KafkaBroker", "metadata": resourceMetadata{Self: self, ResourceName: crn("kafka", id, "broker", brokerID)},
		"cluster_id": id, "broker_id": broker.NodeID, "host": broker.Host, "port": broker.Port, "rack": broker.Rack,
		"configs": related{self + "/configs"}, "partition_replicas": related{self + "/partition-replicas"},
	}
}

// GET /v3/clusters/{cluster_id}/brokers.
func (p *Proxy) listBrokersV3(r *request) (int, any, error) {
	id, metadata, err := clusterID(r)
	if err != nil {
		return 0, nil, err
	}
	if r.PathValue("cluster") != id {
		return 0, nil, newError(http.StatusNotFound, 404, "Cluster %s cannot be found.", r.PathValue("cluster"))
	}
	brokers := slices.Clone(metadata.Brokers)
	slices.SortFunc(brokers, func(a, b kadm.BrokerDetail) int { return int(a.NodeID - b.NodeID) })
	var data []any
	for _, broker := range brokers {
		data = append(data, brokerOfV3(r, id, broker))
	}
	return http.StatusOK, list(r, "KafkaBrokerList", data), nil
}

// GET /v3/clusters/{cluster_id}/brokers/{broker}.
func (p *Proxy) getBrokerV3(r *request) (int, any, error) {
	id, metadata, err := clusterID(r)
	if err != nil {
		return 0, nil, err
	}
	for _, broker := range metadata.Brokers {
		if strconv.Itoa(int(broker.NodeID)) == r.PathValue("broker") && r.PathValue("cluster") == id {
			return http.StatusOK, brokerOfV3(r, id, broker), nil
		}
	}
	return 0, nil, newError(http.StatusNotFound, 404, "Broker %s cannot be found.", r.PathValue("broker"))
}
