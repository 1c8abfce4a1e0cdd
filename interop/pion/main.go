// Command pion-interop checks wisp against a real WebRTC stack, pion's RTP/RTCP packet code and
// its send-side congestion controller (github.com/pion/interceptor/pkg/gcc).
//
//	pion-interop send -to HOST:PORT [-duration 20s] [-initial-kbps 1000] [-log FILE]
//	pion-interop recv -listen HOST:PORT [-forward HOST:PORT | -twcc] [-duration 10s]
//
// send: a pion sender with pion's GCC (the transport-wide sequence number header-extension
// interceptor plus the cc interceptor around gcc.SendSideBWE with its leaky-bucket pacer). A
// synthetic 30 fps source produces, every frame, target/30 bits of payload in RTP packets of at
// most 1200 payload bytes; the pacer sends them over UDP to -to. Transport-wide feedback (RTCP
// TransportLayerCC) read from the same socket goes to the estimator. Every 100 ms a JSON line
// with the target bitrate goes to -log (default stdout); the last line is a summary.
//
// recv: listens on UDP and parses every datagram with pion's parsers: RTP (rtp.Packet.Unmarshal,
// plus the abs-send-time and transport-cc header extensions when present) or RTCP (rtcp.Unmarshal;
// RFC 5761 demultiplexing on the packet type). It counts packets by type and parse errors. With
// -forward it is a relay ("tap"): what comes in is sent on to -forward, and what comes back from
// there is parsed the same way and returned to the last source, so both directions of a session
// (media and sender reports one way, receiver feedback such as REMB the other) pass through
// pion's parsers. At the end (-duration, or -idle without traffic) it prints a JSON summary.
// With -twcc it is a WebRTC receiver's congestion-control half instead: pion's own transport-wide
// feedback generator (pkg/twcc's SenderInterceptor, bound to the remote stream with the
// transport-cc extension at id 2) sees every RTP packet and its RTCP TransportLayerCC feedback
// (every -twcc-interval, 50 ms by default as libwebrtc's at these rates; pion's default is 100 ms)
// goes back to the RTP packets' source address.
//
// Both send traffic only to the addresses given and end by themselves.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/interceptor/pkg/cc"
	"github.com/pion/interceptor/pkg/gcc"
	"github.com/pion/interceptor/pkg/twcc"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"golang.org/x/sys/unix"
)

const (
	transportCCURI = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
	transportCCID  = 2 // wisp's id for it (wisp recv --twcc's default)
	absSendTimeID  = 1 // wisp's id for abs-send-time
	frameRate      = 30
	maxPayload     = 1200
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "send":
		err = send(os.Args[2:])
	case "recv":
		err = recv(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pion-interop:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: pion-interop send -to HOST:PORT [flags] | recv -listen HOST:PORT [flags]")
	os.Exit(2)
}

// ---------------------------------------------------------------------------------------------
// send

type sample struct {
	Type         string   `json:"type"`
	T            float64  `json:"t_s"`
	TargetBps    int      `json:"target_bps"`
	DelayBps     any      `json:"delay_target_bps"`
	LossBps      any      `json:"loss_target_bps"`
	Usage        any      `json:"usage"`
	State        any      `json:"state"`
	LinkT        *float64 `json:"link_t_s,omitempty"`
	SentBps      float64  `json:"sent_bps"`
	FeedbackSeen int64    `json:"feedback_packets"`
}

type sendSummary struct {
	Type            string  `json:"type"`
	DurationS       float64 `json:"duration_s"`
	PacketsSent     int64   `json:"packets_sent"`
	BytesSent       int64   `json:"bytes_sent"`
	FeedbackPackets int64   `json:"feedback_packets"`
	OtherRTCP       int64   `json:"other_rtcp_packets"`
	ParseErrors     int64   `json:"parse_errors"`
	FinalTargetBps  int     `json:"final_target_bps"`
}

func send(args []string) error {
	fs := flag.NewFlagSet("send", flag.ExitOnError)
	to := fs.String("to", "", "receiver address HOST:PORT")
	duration := fs.Duration("duration", 20*time.Second, "how long to send")
	initialKbps := fs.Int("initial-kbps", 1000, "GCC's initial target")
	minKbps := fs.Int("min-kbps", 100, "GCC's minimum target")
	maxKbps := fs.Int("max-kbps", 10000, "GCC's maximum target")
	logPath := fs.String("log", "", "JSON-lines log file (default stdout)")
	linger := fs.Duration("linger", 2*time.Second, "after sending, keep reading feedback this long (the link's queue drains)")
	epochNs := fs.Int64("epoch-ns", 0, "also log link_t_s, seconds since this CLOCK_MONOTONIC instant (wisp link's $WISP_LINK_EPOCH_NS)")
	_ = fs.Parse(args)
	if *to == "" {
		return errors.New("send: -to is required")
	}
	raddr, err := net.ResolveUDPAddr("udp", *to)
	if err != nil {
		return err
	}
	conn, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		return err
	}
	defer conn.Close()
	var out io.Writer = os.Stdout
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	enc := json.NewEncoder(out)

	initial := *initialKbps * 1000
	bwe, err := gcc.NewSendSideBWE(
		gcc.SendSideBWEInitialBitrate(initial),
		gcc.SendSideBWEMinBitrate(*minKbps*1000),
		gcc.SendSideBWEMaxBitrate(*maxKbps*1000),
		gcc.SendSideBWEPacer(gcc.NewLeakyBucketPacer(initial)),
	)
	if err != nil {
		return err
	}
	ccFactory, err := cc.NewInterceptor(func() (cc.BandwidthEstimator, error) { return bwe, nil })
	if err != nil {
		return err
	}
	ccI, err := ccFactory.NewInterceptor("")
	if err != nil {
		return err
	}
	extFactory, err := twcc.NewHeaderExtensionInterceptor()
	if err != nil {
		return err
	}
	extI, err := extFactory.NewInterceptor("")
	if err != nil {
		return err
	}
	// As pion's webrtc registry orders them: the header-extension interceptor is outermost, so
	// a packet has its transport-wide sequence number before the estimator records it as sent.
	chain := interceptor.NewChain([]interceptor.Interceptor{ccI, extI})

	ssrc := rand.Uint32()
	info := &interceptor.StreamInfo{
		SSRC:                ssrc,
		ClockRate:           90000,
		PayloadType:         96,
		RTPHeaderExtensions: []interceptor.RTPHeaderExtension{{URI: transportCCURI, ID: transportCCID}},
	}
	var packets, bytes, feedback, otherRTCP, parseErrors atomic.Int64
	writer := chain.BindLocalStream(info, interceptor.RTPWriterFunc(
		func(h *rtp.Header, payload []byte, _ interceptor.Attributes) (int, error) {
			pkt := rtp.Packet{Header: *h, Payload: payload}
			b, err := pkt.Marshal()
			if err != nil {
				return 0, err
			}
			n, err := conn.Write(b)
			if err == nil {
				packets.Add(1)
				bytes.Add(int64(n))
			}
			// A refused datagram (the receiver is not up yet) is not an error of the sender.
			return n, nil
		}))
	reader := chain.BindRTCPReader(interceptor.RTCPReaderFunc(
		func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
			n, err := conn.Read(b)
			if err != nil {
				return 0, nil, err
			}
			pkts, err := rtcp.Unmarshal(b[:n])
			if err != nil {
				parseErrors.Add(1)
				return 0, nil, err
			}
			for _, p := range pkts {
				if _, ok := p.(*rtcp.TransportLayerCC); ok {
					feedback.Add(1)
				} else {
					otherRTCP.Add(1)
				}
			}
			return n, a, nil
		}))

	start := time.Now()
	end := start.Add(*duration)
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 1500)
		for !done.Load() {
			_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			// Errors (timeouts, refused, malformed) are counted above or harmless; keep reading.
			_, _, _ = reader.Read(buf, nil)
		}
	}()

	// The synthetic source: each frame carries target/frameRate bits, split into packets.
	frame := time.NewTicker(time.Second / frameRate)
	defer frame.Stop()
	logTick := time.NewTicker(100 * time.Millisecond)
	defer logTick.Stop()
	var seq uint16 = uint16(rand.Uint32())
	lastLog, lastBytes := start, int64(0)
	for now := time.Now(); now.Before(end); now = time.Now() {
		select {
		case <-frame.C:
			target := bwe.GetTargetBitrate()
			left := target / 8 / frameRate
			ts := uint32(now.Sub(start).Seconds() * 90000)
			for left > 0 {
				size := min(left, maxPayload)
				left -= size
				h := rtp.Header{
					Version: 2, PayloadType: 96, SequenceNumber: seq, Timestamp: ts,
					SSRC: ssrc, Marker: left == 0,
				}
				seq++
				if _, err := writer.Write(&h, make([]byte, size), nil); err != nil {
					return err
				}
			}
		case t := <-logTick.C:
			st := bwe.GetStats()
			b := bytes.Load()
			var linkT *float64
			if *epochNs != 0 {
				v := float64(monotonicNs()-*epochNs) / 1e9
				linkT = &v
			}
			_ = enc.Encode(sample{
				Type: "sample", T: t.Sub(start).Seconds(), TargetBps: bwe.GetTargetBitrate(),
				DelayBps: st["delayTargetBitrate"], LossBps: st["lossTargetBitrate"],
				Usage: st["usage"], State: st["state"], LinkT: linkT,
				SentBps:      float64(b-lastBytes) * 8 / t.Sub(lastLog).Seconds(),
				FeedbackSeen: feedback.Load(),
			})
			lastLog, lastBytes = t, b
		}
	}
	// Stop sending (the pacer drops what it still holds), then wait for the last feedback.
	stopped := time.Since(start).Seconds()
	finalTarget := bwe.GetTargetBitrate()
	if err := chain.Close(); err != nil {
		return err
	}
	time.Sleep(*linger)
	done.Store(true)
	wg.Wait()
	return enc.Encode(sendSummary{
		Type: "summary", DurationS: stopped, PacketsSent: packets.Load(),
		BytesSent: bytes.Load(), FeedbackPackets: feedback.Load(), OtherRTCP: otherRTCP.Load(),
		ParseErrors: parseErrors.Load(), FinalTargetBps: finalTarget,
	})
}

// monotonicNs reads CLOCK_MONOTONIC, the clock of wisp's instants and of $WISP_LINK_EPOCH_NS.
func monotonicNs() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// ---------------------------------------------------------------------------------------------
// recv

// direction counts what pion's parsers made of one direction's datagrams.
type direction struct {
	Datagrams       int64            `json:"datagrams"`
	RTPPackets      int64            `json:"rtp_packets"`
	RTCPDatagrams   int64            `json:"rtcp_datagrams"`
	RTCPPackets     map[string]int64 `json:"rtcp_packets"`
	AbsSendTime     int64            `json:"abs_send_time_extensions"`
	TransportCC     int64            `json:"transport_cc_extensions"`
	ParseErrors     int64            `json:"parse_errors"`
	Errors          []string         `json:"first_errors"`
	LastREMBBitrate *float64         `json:"last_remb_bps"`
	ssrcs           map[uint32]bool
}

func newDirection() *direction {
	return &direction{RTCPPackets: map[string]int64{}, Errors: []string{}, ssrcs: map[uint32]bool{}}
}

func (d *direction) fail(what string, err error) {
	d.ParseErrors++
	if len(d.Errors) < 10 {
		d.Errors = append(d.Errors, fmt.Sprintf("%s: %v", what, err))
	}
}

// parse runs pion's parsers on one datagram (RFC 5761: RTCP packet types are 192–223).
func (d *direction) parse(b []byte) {
	d.Datagrams++
	if len(b) >= 2 && b[1] >= 192 && b[1] <= 223 {
		d.RTCPDatagrams++
		pkts, err := rtcp.Unmarshal(b)
		if err != nil {
			d.fail("rtcp", err)
			return
		}
		for _, p := range pkts {
			name := rtcpName(p)
			d.RTCPPackets[name]++
			if r, ok := p.(*rtcp.ReceiverEstimatedMaximumBitrate); ok {
				v := float64(r.Bitrate)
				d.LastREMBBitrate = &v
			}
		}
		return
	}
	var p rtp.Packet
	if err := p.Unmarshal(b); err != nil {
		d.fail("rtp", err)
		return
	}
	d.RTPPackets++
	if e := p.GetExtension(absSendTimeID); e != nil {
		var a rtp.AbsSendTimeExtension
		if err := a.Unmarshal(e); err != nil {
			d.fail("abs-send-time", err)
		} else {
			d.AbsSendTime++
		}
	}
	if e := p.GetExtension(transportCCID); e != nil {
		var t rtp.TransportCCExtension
		if err := t.Unmarshal(e); err != nil {
			d.fail("transport-cc", err)
		} else {
			d.TransportCC++
		}
	}
}

func rtcpName(p rtcp.Packet) string {
	switch p.(type) {
	case *rtcp.SenderReport:
		return "SR"
	case *rtcp.ReceiverReport:
		return "RR"
	case *rtcp.SourceDescription:
		return "SDES"
	case *rtcp.Goodbye:
		return "BYE"
	case *rtcp.ApplicationDefined:
		return "APP"
	case *rtcp.ReceiverEstimatedMaximumBitrate:
		return "REMB"
	case *rtcp.TransportLayerCC:
		return "TWCC"
	case *rtcp.CCFeedbackReport:
		return "CCFB"
	case *rtcp.RawPacket:
		return "unrecognised"
	default:
		return fmt.Sprintf("%T", p)
	}
}

type recvSummary struct {
	DurationS     float64    `json:"duration_s"`
	FromSender    *direction `json:"from_sender"`
	FromReceiver  *direction `json:"from_receiver,omitempty"`
	ParseErrors   int64      `json:"parse_errors"`
	RTCPTypes     []string   `json:"rtcp_types"`
	ForwardErrors int64      `json:"forward_errors"`
	// -twcc: TransportLayerCC packets pion's generator wrote, and datagrams that failed to go.
	TWCCFeedback    *int64 `json:"twcc_feedback_packets,omitempty"`
	TWCCWriteErrors int64  `json:"twcc_write_errors"`
}

func recv(args []string) error {
	fs := flag.NewFlagSet("recv", flag.ExitOnError)
	listen := fs.String("listen", "", "address to listen on HOST:PORT")
	forward := fs.String("forward", "", "relay to this address and back (optional)")
	duration := fs.Duration("duration", 10*time.Second, "stop this long after the first datagram")
	idle := fs.Duration("idle", 5*time.Second, "stop after this long without datagrams (once started)")
	wait := fs.Duration("wait", 30*time.Second, "give up if nothing arrives for this long")
	withTWCC := fs.Bool("twcc", false, "answer the RTP with pion's transport-wide feedback (pkg/twcc)")
	twccInterval := fs.Duration("twcc-interval", 50*time.Millisecond, "transport-wide feedback interval with -twcc")
	_ = fs.Parse(args)
	if *listen == "" {
		return errors.New("recv: -listen is required")
	}
	if *withTWCC && *forward != "" {
		return errors.New("recv: -twcc and -forward exclude each other")
	}
	laddr, err := net.ResolveUDPAddr("udp", *listen)
	if err != nil {
		return err
	}
	ls, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return err
	}
	defer ls.Close()
	var up *net.UDPConn
	if *forward != "" {
		faddr, err := net.ResolveUDPAddr("udp", *forward)
		if err != nil {
			return err
		}
		if up, err = net.DialUDP("udp", nil, faddr); err != nil {
			return err
		}
		defer up.Close()
	}
	var mu sync.Mutex
	fromSender, fromReceiver := newDirection(), newDirection()
	var first, last time.Time
	var client *net.UDPAddr
	var forwardErrors int64
	stopAt := func(now time.Time) bool {
		mu.Lock()
		defer mu.Unlock()
		if first.IsZero() {
			return false
		}
		return now.Sub(first) >= *duration || now.Sub(last) >= *idle
	}
	started := time.Now()
	var done atomic.Bool
	var wg sync.WaitGroup
	// -twcc: pion's feedback generator, bound to the stream at its first RTP packet.
	var twccFeedback, twccWriteErrors int64
	var twccGen interceptor.Interceptor
	var twccReader interceptor.RTPReader
	var current []byte
	if *withTWCC {
		f, err := twcc.NewSenderInterceptor(twcc.SendInterval(*twccInterval))
		if err != nil {
			return err
		}
		if twccGen, err = f.NewInterceptor(""); err != nil {
			return err
		}
		defer twccGen.Close()
		twccGen.BindRTCPWriter(interceptor.RTCPWriterFunc(
			func(pkts []rtcp.Packet, _ interceptor.Attributes) (int, error) {
				b, err := rtcp.Marshal(pkts)
				if err != nil {
					return 0, err
				}
				mu.Lock()
				c := client
				twccFeedback += int64(len(pkts))
				mu.Unlock()
				if c == nil {
					return 0, nil
				}
				n, err := ls.WriteToUDP(b, c)
				if err != nil {
					mu.Lock()
					twccWriteErrors++
					mu.Unlock()
				}
				return n, err
			}))
	}
	// feedTWCC hands one RTP datagram to the generator (under mu: current is the datagram).
	feedTWCC := func(b []byte) {
		var h rtp.Header
		if _, err := h.Unmarshal(b); err != nil {
			return
		}
		if twccReader == nil {
			twccReader = twccGen.BindRemoteStream(&interceptor.StreamInfo{
				SSRC:                h.SSRC,
				RTPHeaderExtensions: []interceptor.RTPHeaderExtension{{URI: transportCCURI, ID: transportCCID}},
			}, interceptor.RTPReaderFunc(func(out []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
				return copy(out, current), a, nil
			}))
		}
		current = b
		rb := make([]byte, len(b))
		if _, _, err := twccReader.Read(rb, nil); err != nil {
			fromSender.fail("twcc", err)
		}
	}
	if up != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 65536)
			for !done.Load() {
				_ = up.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				n, err := up.Read(buf)
				if err != nil {
					continue
				}
				mu.Lock()
				fromReceiver.parse(buf[:n])
				c := client
				mu.Unlock()
				if c != nil {
					if _, err := ls.WriteToUDP(buf[:n], c); err != nil {
						mu.Lock()
						forwardErrors++
						mu.Unlock()
					}
				}
			}
		}()
	}
	buf := make([]byte, 65536)
	for {
		now := time.Now()
		if stopAt(now) {
			break
		}
		mu.Lock()
		never := first.IsZero() && now.Sub(started) > *wait
		mu.Unlock()
		if never {
			break
		}
		_ = ls.SetReadDeadline(now.Add(100 * time.Millisecond))
		n, from, err := ls.ReadFromUDP(buf)
		if err != nil {
			continue
		}
		mu.Lock()
		now = time.Now()
		if first.IsZero() {
			first = now
		}
		last = now
		client = from
		fromSender.parse(buf[:n])
		isRTP := n >= 2 && !(buf[1] >= 192 && buf[1] <= 223)
		mu.Unlock()
		if twccGen != nil && isRTP {
			feedTWCC(buf[:n])
		}
		if up != nil {
			if _, err := up.Write(buf[:n]); err != nil {
				mu.Lock()
				forwardErrors++
				mu.Unlock()
			}
		}
	}
	done.Store(true)
	wg.Wait()
	if twccGen != nil {
		// Stops the generator's loop (its last feedback goes out first).
		_ = twccGen.Close()
	}
	s := recvSummary{FromSender: fromSender, ForwardErrors: forwardErrors}
	if twccGen != nil {
		mu.Lock()
		fb := twccFeedback
		s.TWCCWriteErrors = twccWriteErrors
		mu.Unlock()
		s.TWCCFeedback = &fb
	}
	if !first.IsZero() {
		s.DurationS = last.Sub(first).Seconds()
	}
	s.ParseErrors = fromSender.ParseErrors
	types := map[string]bool{}
	for k := range fromSender.RTCPPackets {
		types[k] = true
	}
	if up != nil {
		s.FromReceiver = fromReceiver
		s.ParseErrors += fromReceiver.ParseErrors
		for k := range fromReceiver.RTCPPackets {
			types[k] = true
		}
	}
	for k := range types {
		s.RTCPTypes = append(s.RTCPTypes, k)
	}
	sort.Strings(s.RTCPTypes)
	if first.IsZero() {
		return errors.New("recv: nothing arrived")
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
