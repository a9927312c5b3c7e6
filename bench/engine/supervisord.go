package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// supervisordStarts starts n `sleep` programs under supervisord (when it is
// installed: Debian's `supervisor` package; it is no requirement of
// Shepherd's), one XML-RPC startProcess after another over its Unix socket,
// as a client of it would, and prints the median start and the total. The
// programs have startsecs=0: a start returns once the program is spawned,
// not after the default second of staying up (with which 100 starts one
// after another take at least 100 s).
func supervisordStarts(n int, tmp string) {
	bin, err := exec.LookPath("supervisord")
	if err != nil {
		fmt.Println("supervisord: not installed, skipped (Debian: apt install supervisor)")
		return
	}
	dir := filepath.Join(tmp, "supervisord")
	check(os.MkdirAll(dir, 0o700))
	sock := filepath.Join(dir, "supervisor.sock")
	var conf strings.Builder
	fmt.Fprintf(&conf, "[unix_http_server]\nfile=%s\n\n[supervisord]\nnodaemon=true\nlogfile=%s\npidfile=%s\nchildlogdir=%s\nloglevel=warn\n\n",
		sock, filepath.Join(dir, "supervisord.log"), filepath.Join(dir, "supervisord.pid"), dir)
	conf.WriteString("[rpcinterface:supervisor]\nsupervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface\n\n")
	for i := range n {
		fmt.Fprintf(&conf, "[program:a%d]\ncommand=sleep 3600\nautostart=false\nstartsecs=0\nstopsignal=KILL\nstdout_logfile=%s\nredirect_stderr=true\n\n",
			i, filepath.Join(dir, "a"+strconv.Itoa(i)+".log"))
	}
	confPath := filepath.Join(dir, "supervisord.conf")
	check(os.WriteFile(confPath, []byte(conf.String()), 0o600))
	cmd := exec.Command(bin, "-c", confPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := os.Create(filepath.Join(dir, "console.log"))
	check(err)
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	check(cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	defer func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if s, err := rpc(c, "supervisor.getState"); err == nil && strings.Contains(s, "RUNNING") {
			break
		}
		if time.Now().After(deadline) {
			fmt.Println("supervisord: did not answer in 20 s, skipped")
			return
		}
	}
	pid := cmd.Process.Pid
	var starts []time.Duration
	cpu0 := cpuOf(pid)
	t0 := time.Now()
	for i := range n {
		t := time.Now()
		if _, err := rpc(c, "supervisor.startProcess", "a"+strconv.Itoa(i), true); err != nil {
			fmt.Println("supervisord: start:", err)
			return
		}
		starts = append(starts, time.Since(t))
	}
	total := time.Since(t0)
	cpu := time.Duration(cpuOf(pid) - cpu0)
	fmt.Printf("supervisord %s: %d starts one after another until all running: %s (start median %s, max %s; supervisord CPU %s)\n",
		version(bin), n, total.Round(time.Millisecond), median(starts).Round(10*time.Microsecond), slices.Max(starts).Round(10*time.Microsecond),
		cpu.Round(time.Millisecond))
	_, _ = rpc(c, "supervisor.stopAllProcesses", true)
	_, _ = rpc(c, "supervisor.shutdown")
	select {
	case <-done:
	case <-time.After(20 * time.Second):
	}
}

// rpc calls an XML-RPC method of supervisord with string and boolean
// arguments and returns the answer's body; a fault is an error.
func rpc(c *http.Client, method string, args ...any) (string, error) {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?><methodCall><methodName>` + method + `</methodName><params>`)
	for _, a := range args {
		switch v := a.(type) {
		case string:
			b.WriteString("<param><value><string>" + v + "</string></value></param>")
		case bool:
			x := "0"
			if v {
				x = "1"
			}
			b.WriteString("<param><value><boolean>" + x + "</boolean></value></param>")
		}
	}
	b.WriteString("</params></methodCall>")
	resp, err := c.Post("http://supervisord/RPC2", "text/xml", &b)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK || bytes.Contains(body, []byte("<fault>")) {
		return "", fmt.Errorf("%s: %s", method, body)
	}
	return string(body), nil
}

func version(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}
