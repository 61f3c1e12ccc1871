package console

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

type transactionRow struct {
	TxnID         string
	State         string
	ProducerID    int64
	ProducerEpoch int16
	TimeoutMs     int32
	StartMs       int64
	Partitions    []string
	Hanging       bool
	Error         string
}

type producerRow struct {
	Partition             int32
	Leader                int32
	ProducerID            int64
	ProducerEpoch         int16
	LastSequence          int32
	LastTimestampMs       int64
	CurrentTxnStartOffset int64
}

type transactionsData struct {
	Transactions   []transactionRow
	Topic          string
	Producers      []producerRow
	ProducersError string
}

// transactionsMax bounds the transactions one page describes.
const transactionsMax = 500

func (c *Console) transactionsPage(w http.ResponseWriter, r *http.Request) {
	s, err := c.session(r)
	if err != nil {
		c.fail(w, r, http.StatusUnauthorized, err)
		return
	}
	ctx, cancel := requestContext(r)
	defer cancel()
	listed, err := s.admin.ListTransactions(ctx, nil, nil)
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, fmt.Errorf("list transactions: %w", err))
		return
	}
	ids := listed.TransactionalIDs()
	slices.Sort(ids)
	ids = ids[:min(len(ids), transactionsMax)]
	described, _ := s.admin.DescribeTransactions(ctx, ids...)
	nowMs := time.Now().UnixMilli()
	data := transactionsData{Topic: strings.TrimSpace(r.URL.Query().Get("topic"))}
	for _, id := range ids {
		row := transactionRow{TxnID: id, State: listed[id].State, ProducerID: listed[id].ProducerID}
		if d, ok := described[id]; ok {
			row.State, row.ProducerEpoch, row.TimeoutMs, row.StartMs = d.State, d.ProducerEpoch, d.TimeoutMillis, d.StartTimestamp
			if d.Err != nil {
				row.Error = d.Err.Error()
			}
			d.Topics.Each(func(topic string, partition int32) {
				row.Partitions = append(row.Partitions, fmt.Sprintf("%s-%d", topic, partition))
			})
			slices.Sort(row.Partitions)
			// Hanging: open well past its timeout, which the coordinator
			// would have aborted.
			row.Hanging = d.State == "Ongoing" && d.StartTimestamp > 0 && nowMs-d.StartTimestamp > 2*int64(d.TimeoutMillis)
		}
		data.Transactions = append(data.Transactions, row)
	}
	if data.Topic != "" {
		producers, err := s.admin.DescribeProducers(ctx, kadm.TopicsSet{data.Topic: {}})
		if err != nil {
			data.ProducersError = err.Error()
		}
		producers.EachPartition(func(p kadm.DescribedProducersPartition) {
			if p.Err != nil && data.ProducersError == "" {
				data.ProducersError = p.Err.Error()
			}
			for _, producer := range p.ActiveProducers.Sorted() {
				data.Producers = append(data.Producers, producerRow{Partition: p.Partition, Leader: p.Leader, ProducerID: producer.ProducerID,
					ProducerEpoch: producer.ProducerEpoch, LastSequence: producer.LastSequence, LastTimestampMs: producer.LastTimestamp,
					CurrentTxnStartOffset: producer.CurrentTxnStartOffset})
			}
		})
	}
	c.render(w, r, http.StatusOK, "transactions", page{Title: "Transactions and producers", Nav: "transactions", Data: data})
}
