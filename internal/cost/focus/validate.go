package focus

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ErrInvalid is wrapped by every error about a dataset that does not
// conform to the claimed columns.
var ErrInvalid = errors.New("not a FOCUS 1.2 dataset with corral's columns")

// Summary is what a valid dataset holds.
type Summary struct {
	Rows       int
	BilledCost *big.Rat // the sum of BilledCost
}

// BilledUSD writes the BilledCost sum with two decimals.
func (s Summary) BilledUSD() string { return s.BilledCost.FloatString(2) }

var (
	decimalRE  = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)
	currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)
)

// Validate reads a CSV dataset from r (named name in errors) and checks it
// against the claimed columns. Every error names the row (counted as the
// file's lines, the header being 1) and the column.
func Validate(r io.Reader, name string) (Summary, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err != nil {
		return Summary{}, fmt.Errorf("%w: %s: header: %v", ErrInvalid, name, err)
	}
	at, err := columnIndex(header, name)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{BilledCost: new(big.Rat)}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Summary{}, fmt.Errorf("%w: %s:%d: %v", ErrInvalid, name, line, err)
		}
		get := func(col string) string { return rec[at[col]] }
		if err := checkRow(get); err != nil {
			return Summary{}, fmt.Errorf("%w: %s:%d: %w", ErrInvalid, name, line, err)
		}
		cost, _ := new(big.Rat).SetString(get("BilledCost"))
		sum.BilledCost.Add(sum.BilledCost, cost)
		sum.Rows++
	}
	return sum, nil
}

// columnIndex finds every claimed column in the header.
func columnIndex(header []string, name string) (map[string]int, error) {
	at := map[string]int{}
	for i, h := range header {
		if _, dup := at[h]; dup {
			return nil, fmt.Errorf("%w: %s:1: column %s appears twice", ErrInvalid, name, h)
		}
		at[h] = i
	}
	var missing []string
	for _, c := range Columns {
		if _, ok := at[c.Name]; !ok {
			missing = append(missing, c.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s:1: missing column %s", ErrInvalid, name, strings.Join(missing, ", "))
	}
	return at, nil
}

// checkRow checks one row's values, then the rules between columns.
func checkRow(get func(string) string) error {
	category, class := get("ChargeCategory"), get("ChargeClass")
	for _, c := range Columns {
		if err := checkValue(c, get(c.Name), category, class); err != nil {
			return fmt.Errorf("column %s: %w", c.Name, err)
		}
	}
	for _, p := range [][2]string{{"BillingPeriodStart", "BillingPeriodEnd"}, {"ChargePeriodStart", "ChargePeriodEnd"}} {
		start, _ := time.Parse(dateTime, get(p[0]))
		end, _ := time.Parse(dateTime, get(p[1]))
		if !start.Before(end) {
			return fmt.Errorf("column %s: %s is not before %s %s", p[0], get(p[0]), p[1], get(p[1]))
		}
	}
	if class == "Correction" {
		return nil
	}
	for _, p := range [][3]string{{"ListCost", "ListUnitPrice", "PricingQuantity"}, {"ContractedCost", "ContractedUnitPrice", "PricingQuantity"}} {
		if err := checkProduct(get, p[0], p[1], p[2]); err != nil {
			return err
		}
	}
	return nil
}

// checkValue checks one value against its column: null when it may be,
// then type and allowed values.
func checkValue(c Column, v, category, class string) error {
	if v == "" {
		usage := class != "Correction" && category == "Usage"
		bought := class != "Correction" && (category == "Usage" || category == "Purchase")
		if c.Null == Never || c.Null == NotInUsage && usage || c.Null == NotInUsageOrBought && bought {
			return fmt.Errorf("is empty (null), which FOCUS %s does not allow here (ChargeCategory %s)", Version, category)
		}
		return nil
	}
	switch c.Type {
	case Decimal:
		if !decimalRE.MatchString(v) {
			return fmt.Errorf("%q is not a decimal", v)
		}
	case DateTime:
		if _, err := time.Parse(dateTime, v); err != nil {
			return fmt.Errorf("%q is not an ISO 8601 UTC date and time (YYYY-MM-DDTHH:mm:ssZ)", v)
		}
	case Currency:
		if !currencyRE.MatchString(v) {
			return fmt.Errorf("%q is not an ISO 4217 currency code", v)
		}
	case JSON:
		var obj map[string]any
		if err := json.Unmarshal([]byte(v), &obj); err != nil {
			return fmt.Errorf("%q is not a JSON object: %v", v, err)
		}
	}
	if len(c.Allowed) > 0 && !slices.Contains(c.Allowed, v) {
		return fmt.Errorf("%q is not an allowed value (%s)", v, strings.Join(c.Allowed, ", "))
	}
	return nil
}

// checkProduct checks that unit price times quantity is the cost, within
// half a cent (costs are whole cents).
func checkProduct(get func(string) string, cost, unit, quantity string) error {
	if get(unit) == "" || get(quantity) == "" {
		return nil
	}
	c, _ := new(big.Rat).SetString(get(cost))
	u, _ := new(big.Rat).SetString(get(unit))
	q, _ := new(big.Rat).SetString(get(quantity))
	diff := new(big.Rat).Sub(new(big.Rat).Mul(u, q), c)
	if diff.Abs(diff).Cmp(big.NewRat(1, 200)) > 0 {
		return fmt.Errorf("column %s: %s is not %s %s times %s %s", cost, get(cost), unit, get(unit), quantity, get(quantity))
	}
	return nil
}
