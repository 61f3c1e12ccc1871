package api

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every API a broker forwards has an error answer (a failed forward answers
// it rather than closing the connection), which encodes at every version
// kmsg knows and carries the code on every item of the request.
func TestErrorResponseForEveryForwardedAPI(t *testing.T) {
	// Requests with two items where the API has items.
	filled := map[int16]kmsg.Request{}
	{
		r := kmsg.NewPtrCreateTopicsRequest()
		r.Topics = make([]kmsg.CreateTopicsRequestTopic, 2)
		filled[19] = r
	}
	{
		r := kmsg.NewPtrDeleteTopicsRequest()
		r.Topics = make([]kmsg.DeleteTopicsRequestTopic, 2)
		r.TopicNames = []string{"a", "b"}
		filled[20] = r
	}
	{
		r := kmsg.NewPtrCreateACLsRequest()
		r.Creations = make([]kmsg.CreateACLsRequestCreation, 2)
		filled[30] = r
	}
	{
		r := kmsg.NewPtrDeleteACLsRequest()
		r.Filters = make([]kmsg.DeleteACLsRequestFilter, 2)
		filled[31] = r
	}
	{
		r := kmsg.NewPtrAlterConfigsRequest()
		r.Resources = make([]kmsg.AlterConfigsRequestResource, 2)
		filled[33] = r
	}
	{
		r := kmsg.NewPtrCreatePartitionsRequest()
		r.Topics = make([]kmsg.CreatePartitionsRequestTopic, 2)
		filled[37] = r
	}
	{
		r := kmsg.NewPtrElectLeadersRequest()
		r.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "a", Partitions: []int32{0, 1}}}
		filled[43] = r
	}
	{
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r.Resources = make([]kmsg.IncrementalAlterConfigsRequestResource, 2)
		filled[44] = r
	}
	{
		r := kmsg.NewPtrAlterPartitionAssignmentsRequest()
		r.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "a", Partitions: make([]kmsg.AlterPartitionAssignmentsRequestTopicPartition, 2)}}
		filled[45] = r
	}
	{
		r := kmsg.NewPtrAlterClientQuotasRequest()
		r.Entries = make([]kmsg.AlterClientQuotasRequestEntry, 2)
		filled[49] = r
	}
	{
		r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		r.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "alice"}}
		r.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{{Name: "alice"}, {Name: "bob"}}
		filled[51] = r
	}
	code := kerr.RequestTimedOut.Code
	for key := range forwardableAPIs {
		req := filled[key]
		if req == nil {
			req = kmsg.RequestForKey(key)
		}
		for v := int16(0); v <= req.MaxVersion(); v++ {
			req.SetVersion(v)
			resp := errorResponse(req, v, code, "timed out")
			if resp == nil {
				t.Fatalf("%s: no error response", kmsg.NameForKey(key))
			}
			resp.SetVersion(v)
			decoded := req.ResponseKind()
			decoded.SetVersion(v)
			if err := decoded.ReadFrom(resp.AppendTo(nil)); err != nil {
				t.Fatalf("%s v%d: the error response does not decode: %v", kmsg.NameForKey(key), v, err)
			}
			codes, others := errorCodes(reflect.ValueOf(decoded), code)
			if others > 0 || codes == 0 {
				t.Fatalf("%s v%d: %d error codes %d and %d others", kmsg.NameForKey(key), v, codes, code, others)
			}
			if filled[key] != nil && codes < 2 {
				t.Fatalf("%s v%d: %d items carry the code, want at least 2", kmsg.NameForKey(key), v, codes)
			}
		}
	}
}

// errorCodes counts the ErrorCode fields under v equal to code, and those
// neither equal to it nor zero.
func errorCodes(v reflect.Value, code int16) (matching, others int) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return errorCodes(v.Elem(), code)
		}
	case reflect.Slice:
		for i := range v.Len() {
			m, o := errorCodes(v.Index(i), code)
			matching, others = matching+m, others+o
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).Name == "ErrorCode" {
				if int16(v.Field(i).Int()) == code {
					matching++
				} else if v.Field(i).Int() != 0 {
					others++
				}
				continue
			}
			m, o := errorCodes(v.Field(i), code)
			matching, others = matching+m, others+o
		}
	}
	return matching, others
}
