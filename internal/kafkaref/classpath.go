package kafkaref

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	// ClasspathEnv, when set, is the classpath to use instead of
	// resolving the pom.
	ClasspathEnv = "SAMSA_KAFKA_CLASSPATH"
	// MavenRepoEnv, when set, is Maven's local repository (the cache of
	// downloaded jars), passed as -Dmaven.repo.local.
	MavenRepoEnv = "SAMSA_MAVEN_REPO"
	// pomRelativePath is where the pom lives from the module root.
	pomRelativePath = "bench/kafka"
	classpathFile   = "target/classpath.txt"
)

// ErrUnavailable says Kafka cannot be run here: no java or no Maven and
// no resolved classpath.
var ErrUnavailable = errors.New("kafkaref: Apache Kafka is not available (needs java, and mvn or " + ClasspathEnv + ")")

// Classpath returns the jars of Apache Kafka and its tools joined by ':':
// $SAMSA_KAFKA_CLASSPATH if set, else the pom's target/classpath.txt,
// running Maven first if that file is missing or older than the pom. The
// pom is found under the module root, searched upwards from the working
// directory.
func Classpath(ctx context.Context) (string, error) {
	if _, err := exec.LookPath(javaBinary()); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if cp := os.Getenv(ClasspathEnv); cp != "" {
		return cp, nil
	}
	pomDir, err := findPomDir()
	if err != nil {
		return "", err
	}
	pom := filepath.Join(pomDir, "pom.xml")
	out := filepath.Join(pomDir, classpathFile)
	if !newerThan(out, pom) || !jarsPresent(out) {
		if _, err := exec.LookPath("mvn"); err != nil {
			return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		args := []string{"-B", "-q", "-f", pom, "generate-resources"}
		if repo := os.Getenv(MavenRepoEnv); repo != "" {
			args = append(args, "-Dmaven.repo.local="+repo)
		}
		cmd := exec.CommandContext(ctx, "mvn", args...)
		output := &tailBuffer{limit: outputTailBytes}
		cmd.Stdout, cmd.Stderr = output, output
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("kafkaref: resolving %s with Maven: %w: %s", pom, err, output.String())
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return "", err
	}
	cp := strings.TrimSpace(string(data))
	if cp == "" {
		return "", fmt.Errorf("kafkaref: %s is empty", out)
	}
	return cp, nil
}

// newerThan reports whether path exists and was modified after reference.
func newerThan(path, reference string) bool {
	a, err := os.Stat(path)
	if err != nil {
		return false
	}
	b, err := os.Stat(reference)
	if err != nil {
		return false
	}
	return a.ModTime().After(b.ModTime())
}

// findPomDir walks up from the working directory to the directory holding
// go.mod and returns its bench/kafka.
func findPomDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, pomRelativePath), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("kafkaref: no go.mod above the working directory")
		}
		dir = parent
	}
}

// jarsPresent reports whether every jar a classpath file names exists: a
// file resolved against another Maven repository goes stale.
func jarsPresent(classpathPath string) bool {
	data, err := os.ReadFile(classpathPath)
	if err != nil {
		return false
	}
	for _, jar := range strings.Split(strings.TrimSpace(string(data)), string(os.PathListSeparator)) {
		if _, err := os.Stat(jar); err != nil {
			return false
		}
	}
	return true
}
