package main

import (
	"errors"
	"os"
	"strings"
)

// The Java driver (compat/java): kafka-clients 4.4.0, built by compat/run.sh
// with Maven into compat/java/target, which holds the driver's jar and the
// classpath of every dependency Maven resolved.
const (
	javaJar       = "compat/java/target/samsa-compat-java.jar"
	javaClasspath = "compat/java/target/classpath.txt"
)

func javaDriver(_, scenario string) []string {
	cp, _ := os.ReadFile(javaClasspath)
	return []string{"java", "-Xss1m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dlog4j2.configurationFile=compat/java/log4j2.properties",
		"-cp", strings.TrimSpace(string(cp)) + ":" + javaJar, "samsa.compat.Main", scenario}
}

func javaProbe() error {
	for _, f := range []string{javaJar, javaClasspath} {
		if _, err := os.Stat(f); err != nil {
			return errors.New(f + " is missing (compat/run.sh builds it with mvn package in compat/java)")
		}
	}
	return runs("java", "-version")()
}
