package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The answers a broker gives when a request forwarded to the active
// controller fails (forward.go), as Kafka's ForwardingManager does: every
// forwarded API's getErrorResponse, which puts the code on each item of the
// request and, where the response has one, at the top.

// errorResponse answers every item of req with code, as Kafka's
// getErrorResponse for that request does; nil for a request no broker
// forwards.
func errorResponse(req kmsg.Request, version int16, code int16, message string) kmsg.Response {
	switch r := req.(type) {
	case *kmsg.CreateTopicsRequest:
		resp := kmsg.NewPtrCreateTopicsResponse()
		for _, t := range r.Topics {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic, st.ErrorCode, st.ErrorMessage = t.Topic, code, strptr(message)
			st.NumPartitions, st.ReplicationFactor = -1, -1
			resp.Topics = append(resp.Topics, st)
		}
		return resp
	case *kmsg.DeleteTopicsRequest:
		resp := kmsg.NewPtrDeleteTopicsResponse()
		add := func(name *string, id [16]byte) {
			st := kmsg.NewDeleteTopicsResponseTopic()
			st.Topic, st.TopicID, st.ErrorCode, st.ErrorMessage = name, id, code, strptr(message)
			resp.Topics = append(resp.Topics, st)
		}
		if version >= 6 {
			for _, t := range r.Topics {
				add(t.Topic, t.TopicID)
			}
		} else {
			for _, name := range r.TopicNames {
				add(strptr(name), [16]byte{})
			}
		}
		return resp
	case *kmsg.CreatePartitionsRequest:
		resp := kmsg.NewPtrCreatePartitionsResponse()
		for _, t := range r.Topics {
			st := kmsg.NewCreatePartitionsResponseTopic()
			st.Topic, st.ErrorCode, st.ErrorMessage = t.Topic, code, strptr(message)
			resp.Topics = append(resp.Topics, st)
		}
		return resp
	case *kmsg.ElectLeadersRequest:
		// The top-level code (v1+) and every named partition, as Kafka's
		// ElectLeadersRequest.getErrorResponse.
		resp := kmsg.NewPtrElectLeadersResponse()
		resp.ErrorCode = code
		for _, t := range r.Topics {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewElectLeadersResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = p, code, strptr(message)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.AlterPartitionAssignmentsRequest:
		// The top-level code and every partition, as Kafka's
		// AlterPartitionReassignmentsRequest.getErrorResponse.
		resp := kmsg.NewPtrAlterPartitionAssignmentsResponse()
		resp.ErrorCode, resp.ErrorMessage = code, strptr(message)
		for _, t := range r.Topics {
			rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, strptr(message)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.CreateACLsRequest:
		resp := kmsg.NewPtrCreateACLsResponse()
		for range r.Creations {
			rr := kmsg.NewCreateACLsResponseResult()
			rr.ErrorCode, rr.ErrorMessage = code, strptr(message)
			resp.Results = append(resp.Results, rr)
		}
		return resp
	case *kmsg.DeleteACLsRequest:
		resp := kmsg.NewPtrDeleteACLsResponse()
		for range r.Filters {
			rr := kmsg.NewDeleteACLsResponseResult()
			rr.ErrorCode, rr.ErrorMessage = code, strptr(message)
			resp.Results = append(resp.Results, rr)
		}
		return resp
	case *kmsg.AlterConfigsRequest:
		resp := kmsg.NewPtrAlterConfigsResponse()
		for _, res := range r.Resources {
			rr := kmsg.NewAlterConfigsResponseResource()
			rr.ErrorCode, rr.ErrorMessage = code, strptr(message)
			rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
			resp.Resources = append(resp.Resources, rr)
		}
		return resp
	case *kmsg.IncrementalAlterConfigsRequest:
		resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
		for _, res := range r.Resources {
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ErrorCode, rr.ErrorMessage = code, strptr(message)
			rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
			resp.Resources = append(resp.Resources, rr)
		}
		return resp
	case *kmsg.CreateDelegationTokenRequest:
		// Owned and requested by User:ANONYMOUS, every time -1, as
		// Kafka's CreateDelegationTokenResponse.prepareResponse.
		resp := kmsg.NewPtrCreateDelegationTokenResponse()
		resp.ErrorCode = code
		resp.PrincipalType, resp.PrincipalName = "User", "ANONYMOUS"
		resp.TokenRequesterPrincipalType, resp.TokenRequesterPrincipalName = "User", "ANONYMOUS"
		resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = -1, -1, -1
		resp.HMAC = []byte{}
		return resp
	case *kmsg.RenewDelegationTokenRequest:
		resp := kmsg.NewPtrRenewDelegationTokenResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.ExpireDelegationTokenRequest:
		resp := kmsg.NewPtrExpireDelegationTokenResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.ListPartitionReassignmentsRequest:
		// The named partitions, with no replicas.
		resp := kmsg.NewPtrListPartitionReassignmentsResponse()
		resp.ErrorCode, resp.ErrorMessage = code, strptr(message)
		for _, t := range r.Topics {
			rt := kmsg.NewListPartitionReassignmentsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
				rp.Partition = p
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.AlterClientQuotasRequest:
		return alterClientQuotasError(r, code, message)
	case *kmsg.AlterUserSCRAMCredentialsRequest:
		// One result for each user named by a deletion or an upsertion.
		resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
		seen := map[string]bool{}
		add := func(user string) {
			if seen[user] {
				return
			}
			seen[user] = true
			rr := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
			rr.User, rr.ErrorCode, rr.ErrorMessage = user, code, strptr(message)
			resp.Results = append(resp.Results, rr)
		}
		for _, d := range r.Deletions {
			add(d.Name)
		}
		for _, u := range r.Upsertions {
			add(u.Name)
		}
		return resp
	case *kmsg.DescribeQuorumRequest:
		// The top-level code only, as getTopLevelErrorResponse.
		resp := kmsg.NewPtrDescribeQuorumResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.UpdateFeaturesRequest:
		// The top-level error and no per-feature results, as
		// UpdateFeaturesResponse.createWithErrors.
		resp := kmsg.NewPtrUpdateFeaturesResponse()
		resp.ErrorCode, resp.ErrorMessage = code, strptr(message)
		return resp
	case *kmsg.AddRaftVoterRequest:
		resp := kmsg.NewPtrAddRaftVoterResponse()
		resp.ErrorCode, resp.ErrorMessage = code, strptr(message)
		return resp
	case *kmsg.RemoveRaftVoterRequest:
		resp := kmsg.NewPtrRemoveRaftVoterResponse()
		resp.ErrorCode, resp.ErrorMessage = code, strptr(message)
		return resp
	}
	return nil
}
