package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// Child names and label values, as api/child-names.ts computes them: a name that is not already a valid DNS label
// within the limit is cut and gets the first 8 hex digits of its SHA-256.

const (
	maxLabelLength        = 63
	maxWorkloadNameLength = 52
	hashLength            = 8
)

var (
	dns1123Label      = regexp.MustCompile(`^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$`)
	dns1035Label      = regexp.MustCompile(`^[a-z](?:[-a-z0-9]*[a-z0-9])?$`)
	labelValuePattern = regexp.MustCompile(`^(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
	notLabelChars     = regexp.MustCompile(`[^-A-Za-z0-9_.]+`)
	labelEnds         = regexp.MustCompile(`^[^A-Za-z0-9]+|[^A-Za-z0-9]+$`)
	notNameChars      = regexp.MustCompile(`[^a-z0-9-]+`)
)

func shortHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])[:hashLength]
}

// workloadName is the Deployment's or StatefulSet's name.
func workloadName(instance string) string { return boundedName(instance, maxWorkloadNameLength, false) }

// serviceName is the Service's name (a DNS-1035 label).
func serviceName(instance string) string { return boundedName(instance, maxLabelLength, true) }

// governingServiceName is the headless Service that governs an instance's StatefulSet.
func governingServiceName(instance string) string {
	return boundedName(instance+"-pods", maxLabelLength, true)
}

func labelValue(text string) string {
	if len(text) <= maxLabelLength && labelValuePattern.MatchString(text) {
		return text
	}
	head := notLabelChars.ReplaceAllString(text, "-")
	head = labelEnds.ReplaceAllString(head[:min(len(head), maxLabelLength-hashLength-1)], "")
	if head == "" {
		return shortHash(text)
	}
	return head + "-" + shortHash(text)
}

func boundedName(text string, maxLength int, startsWithLetter bool) string {
	pattern := dns1123Label
	if startsWithLetter {
		pattern = dns1035Label
	}
	if len(text) <= maxLength && pattern.MatchString(text) {
		return text
	}
	head := strings.TrimLeft(notNameChars.ReplaceAllString(strings.ToLower(text), "-"), "-")
	if startsWithLetter && (head == "" || head[0] < 'a' || head[0] > 'z') {
		head = "x-" + head
	}
	head = strings.TrimRight(head[:min(len(head), maxLength-hashLength-1)], "-")
	if head == "" {
		return shortHash(text)
	}
	return head + "-" + shortHash(text)
}
