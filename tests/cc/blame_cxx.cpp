/* blame_cxx.cpp: a C++ member function, inlined at -O2, writing a member
 * vector; tests/cc/test_blame.c samples it: relax's *this.cells and main's g
 * are charged. */
#include <cmath>
#include <vector>
namespace geo {
struct Grid {
    std::vector<double> cells;
    explicit Grid(size_t n) : cells(n) {}
    void relax(double w)
    {
        for (size_t i = 1; i + 1 < cells.size(); i++)
            cells[i] = w * std::sin(cells[i - 1] + i) + (1 - w) * cells[i + 1];
    }
};
}
int main()
{
    geo::Grid g(1 << 20);
    for (int r = 0; r < 20; r++)
        g.relax(0.5);
    return g.cells[7] > 10;
}
