// Command pulumi-language-nodejs is a minimal Pulumi language host for Node.js programs.
//
// Written by hand because upstream's host (github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3)
// is its own, untagged module that the Go module proxy here does not serve. It implements what `pulumi
// preview/up/destroy/refresh` need: run the program with @pulumi/pulumi's own runner (cmd/run), pass config and
// the engine/monitor addresses the way upstream does, and report exit status. Dependency installation, code
// generation and debugging are left unimplemented (the engine treats them as optional).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/shlex"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/config"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// version is stamped at link time (-X main.version=...).
var version = "0.0.0-dev"

// exitAlreadyReported is @pulumi/pulumi's exit code for "the error was already shown to the user".
const exitAlreadyReported = 32

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	engineAddress string
	cancel        context.Context
	// The programs running now: main waits for them, so a program stopped by the context is never orphaned.
	running sync.WaitGroup
}

func main() {
	flag.String("tracing", "", "ignored: tracing endpoint")
	flag.String("runtime", "nodejs", "ignored: only nodejs is supported")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println(version)
		return
	}
	h := &host{}
	if args := flag.Args(); len(args) > 0 {
		h.engineAddress = args[0]
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	h.cancel = ctx
	// An engine that dies hard (a SIGKILLed `pulumi up`) interrupts nothing: stop as if it had interrupted us (a
	// running program gets SIGINT, and is killed cmd.WaitDelay later), and exit regardless after 8 s.
	exitWithParent(func() {
		stop()
		time.AfterFunc(8*time.Second, func() { os.Exit(1) })
	})
	cancelChannel := make(chan bool)
	go func() { <-ctx.Done(); close(cancelChannel) }()

	if h.engineAddress != "" {
		if err := rpcutil.Healthcheck(ctx, h.engineAddress, 5*time.Minute, stop); err != nil {
			fail(fmt.Errorf("could not start health check: %w", err))
		}
	}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: cancelChannel,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fail(fmt.Errorf("could not start language host RPC server: %w", err))
	}
	fmt.Printf("%d\n", handle.Port) // the engine reads our port from the first line of stdout
	if err := <-handle.Done; err != nil {
		fail(fmt.Errorf("language host RPC stopped serving: %w", err))
	}
	h.running.Wait()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "pulumi-language-nodejs:", err)
	os.Exit(1)
}

func (h *host) Handshake(ctx context.Context, req *pulumirpc.LanguageHandshakeRequest) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.engineAddress = req.EngineAddress
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

// GetRequiredPackages reports none: the engine then loads each resource plugin on first use, at the version the
// SDK asks for, from the plugins installed in PULUMI_HOME.
func (h *host) GetRequiredPackages(context.Context, *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) GetRequiredPlugins(context.Context, *pulumirpc.GetRequiredPluginsRequest) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetProgramDependencies(context.Context, *pulumirpc.GetProgramDependenciesRequest) (*pulumirpc.GetProgramDependenciesResponse, error) {
	return &pulumirpc.GetProgramDependenciesResponse{}, nil
}

func (h *host) About(ctx context.Context, _ *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	nodeBin, _ := exec.LookPath("node")
	out, _ := exec.CommandContext(ctx, "node", "--version").Output()
	return &pulumirpc.AboutResponse{Executable: nodeBin, Version: strings.TrimSpace(string(out))}, nil
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	h.running.Add(1)
	defer h.running.Done()
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		return &pulumirpc.RunResponse{Error: "could not find node on the PATH: " + err.Error()}, nil
	}
	programDir := req.GetInfo().GetProgramDirectory()
	runPath, err := resolveModule(ctx, nodeBin, programDir, "@pulumi/pulumi/cmd/run")
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	configJSON, err := legacyConfig(req.GetConfig())
	if err != nil {
		return &pulumirpc.RunResponse{Error: "failed to serialize configuration: " + err.Error()}, nil
	}
	secretKeys, _ := json.Marshal(orEmpty(req.GetConfigSecretKeys()))

	// As upstream: runtime.options.nodeargs (shell words) go to node before the runner.
	nodeArgs, err := optionNodeArgs(req.GetInfo().GetOptions().AsMap())
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	args := append(append(preloadArgs(), nodeArgs...), runPath)
	flagArg := func(k, v string) {
		if v != "" {
			args = append(args, "--"+k, v)
		}
	}
	flagArg("monitor", req.GetMonitorAddress())
	flagArg("engine", h.engineAddress)
	flagArg("organization", req.GetOrganization())
	flagArg("project", req.GetProject())
	flagArg("root-directory", req.GetInfo().GetRootDirectory())
	flagArg("stack", req.GetStack())
	flagArg("pwd", programDir)
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	flagArg("parallel", strconv.Itoa(int(req.GetParallel())))
	args = append(args, req.GetInfo().GetEntryPoint())
	args = append(args, req.GetArgs()...)

	env := append(os.Environ(), "PULUMI_CONFIG="+configJSON, "PULUMI_CONFIG_SECRET_KEYS="+string(secretKeys))
	// As upstream: TypeScript (ts-node) is on unless Pulumi.yaml sets runtime.options.typescript: false.
	if opts := req.GetInfo().GetOptions().AsMap(); opts["typescript"] != false {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}

	cmdCtx, cancel := context.WithCancel(h.cancel)
	defer cancel()
	context.AfterFunc(ctx, cancel)
	cmd := exec.CommandContext(cmdCtx, nodeBin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Dir = programDir
	cmd.Env = env
	// Node may switch its stdio to non-blocking mode; wrapping keeps os.Stdout/err out of its reach.
	cmd.Stdout = struct{ *os.File }{os.Stdout}
	cmd.Stderr = struct{ *os.File }{os.Stderr}
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if exitErr.ExitCode() == exitAlreadyReported {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode())}, nil
		}
		return &pulumirpc.RunResponse{Error: "could not run node: " + err.Error()}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// preloadArgs loads pulumi-nodejs-preload.mjs (the toolchain puts it beside this binary) before @pulumi/pulumi's
// runner: it defers the modules a program rarely uses (TypeScript, npm's arborist, the Automation API) to their
// first use, ~0.3 s of every program's start. Without the file, the program starts as upstream's host starts it.
func preloadArgs() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	preload := filepath.Join(filepath.Dir(exe), "pulumi-nodejs-preload.mjs")
	if _, err := os.Stat(preload); err != nil {
		return nil
	}
	return []string{"--import", preload}
}

// optionNodeArgs reads the nodeargs runtime option as upstream's host does: a string, split into shell words.
func optionNodeArgs(opts map[string]any) ([]string, error) {
	value, ok := opts["nodeargs"]
	if !ok {
		return nil, nil
	}
	text, ok := value.(string)
	if !ok {
		return nil, errors.New("nodeargs option must be a string")
	}
	return shlex.Split(text)
}

// resolveModule finds a module the way the program itself would (from its directory). Where a node_modules above
// the directory holds the package and the package has no "exports" map, Node's answer is that file's real path, and
// it is found here: asking a `node -e` costs every preview, up and destroy a second Node start (~40 ms). Anywhere
// else (NODE_PATH, a global folder, an "exports" map) Node is asked, as upstream's host does.
func resolveModule(ctx context.Context, nodeBin, dir, module string) (string, error) {
	if file, ok := resolveInNodeModules(dir, module); ok {
		return file, nil
	}
	script := fmt.Sprintf(`try{console.log(require.resolve(%q))}catch(e){console.error(e.code==="MODULE_NOT_FOUND"?"The Pulumi SDK (@pulumi/pulumi) is not installed in this project: run npm ci.":e.message);process.exit(1)}`, module)
	cmd := exec.CommandContext(ctx, nodeBin, "-e", script)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return "", errors.New(strings.TrimSpace(string(exitErr.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// resolveInNodeModules resolves "@scope/name/sub/path" as Node would for a package without an "exports" map:
// <dir or an ancestor>/node_modules/@scope/name/sub/path/index.js, the nearest first, symlinks resolved.
func resolveInNodeModules(dir, module string) (string, bool) {
	parts := strings.SplitN(module, "/", 3)
	if len(parts) != 3 || !strings.HasPrefix(parts[0], "@") {
		return "", false
	}
	for d := dir; ; d = filepath.Dir(d) {
		pkg := filepath.Join(d, "node_modules", parts[0], parts[1])
		if manifest, err := os.ReadFile(filepath.Join(pkg, "package.json")); err == nil {
			var fields map[string]json.RawMessage
			if json.Unmarshal(manifest, &fields) != nil || fields["exports"] != nil {
				return "", false
			}
			sub := filepath.Join(pkg, filepath.FromSlash(parts[2]))
			// Node tries the path as a file, and a directory's own package.json, before index.js.
			for _, first := range []string{sub, sub + ".js", filepath.Join(sub, "package.json")} {
				if info, err := os.Stat(first); err == nil && !info.IsDir() {
					return "", false
				}
			}
			file, err := filepath.EvalSymlinks(filepath.Join(sub, "index.js"))
			return file, err == nil
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// legacyConfig renders config keys as <namespace>:config:<name>, the form every @pulumi/pulumi version reads.
func legacyConfig(cfg map[string]string) (string, error) {
	out := make(map[string]string, len(cfg))
	for k, v := range cfg {
		key, err := config.ParseKey(k)
		if err != nil {
			return "", err
		}
		out[key.Namespace()+":config:"+key.Name()] = v
	}
	b, err := json.Marshal(out)
	return string(b), err
}

func orEmpty(keys []string) []string {
	if keys == nil {
		return []string{}
	}
	return keys
}
