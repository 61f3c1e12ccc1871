package diffcheck

import "github.com/twmb/franz-go/pkg/kmsg"

// tokenCases are the delegation token APIs (38-41) on the PLAINTEXT
// listener both nodes are reached on, where Kafka refuses every token
// request before it looks at the request or at whether tokens are enabled.
func tokenCases() []Case {
	return []Case{
		{Key: 38, Name: "create over PLAINTEXT", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrCreateDelegationTokenRequest()
			req.MaxLifetimeMillis = -1
			return req
		}},
		{Key: 39, Name: "renew over PLAINTEXT", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrRenewDelegationTokenRequest()
			req.HMAC, req.RenewTimeMillis = []byte("no such token"), -1
			return req
		}},
		{Key: 40, Name: "expire over PLAINTEXT", Request: func(s *Side, v int16) kmsg.Request {
			req := kmsg.NewPtrExpireDelegationTokenRequest()
			req.HMAC, req.ExpiryPeriodMillis = []byte("no such token"), -1
			return req
		}},
		{Key: 41, Name: "describe all over PLAINTEXT", Request: func(s *Side, v int16) kmsg.Request {
			return kmsg.NewPtrDescribeDelegationTokenRequest()
		}},
	}
}
