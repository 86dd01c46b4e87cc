package kubetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDDir is deploy/crds of the repository that holds the working directory.
func CRDDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "deploy", "crds"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// applyCRDs creates every CRD of deploy/crds and waits until each is
// established.
func (c *Cluster) applyCRDs(ctx context.Context) error {
	dir, err := CRDDir()
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in %s: %v", dir, err)
	}
	return c.ApplyCRDs(ctx, files...)
}

// ApplyCRDs creates the CRD of each file, unless it exists, and waits
// until each is established.
func (c *Cluster) ApplyCRDs(ctx context.Context, files ...string) error {
	for _, f := range files {
		obj, err := readObject(f)
		if err != nil {
			return err
		}
		_, err = c.Dynamic.Resource(crdResource).Create(ctx, obj, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating CRD from %s: %w", f, err)
		}
		if err := c.waitEstablished(ctx, obj.GetName()); err != nil {
			return err
		}
	}
	return nil
}

func readObject(path string) (*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	obj := &unstructured.Unstructured{}
	if err := yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&obj.Object); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return obj, nil
}

func (c *Cluster) waitEstablished(ctx context.Context, name string) error {
	for {
		obj, err := c.Dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not established: %w", name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
