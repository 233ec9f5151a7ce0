// SPDX-License-Identifier: MIT
// The C++ program of test_cc: built by `strobe c++` in the test, measured
// by `strobe run`; its functions must be reported with their C++ names.
//   main                                   1
//     sum_areas(std::vector<...> const&)   1
//       geo::Square::area() const          3
//     int total<int>(...)                  1
#include <cstdio>
#include <vector>

namespace geo {
struct Shape {
    virtual ~Shape() {}
    virtual double area() const = 0;
};
struct Square : Shape {
    double s;
    explicit Square(double x) : s(x) {}
    __attribute__((noinline)) double area() const override { return s * s; }
};
} // namespace geo

template <typename T> __attribute__((noinline)) T total(const std::vector<T> &v)
{
    T t = 0;
    for (auto x : v)
        t += x;
    return t;
}

__attribute__((noinline)) double sum_areas(const std::vector<geo::Shape *> &v)
{
    double a = 0;
    for (auto *s : v)
        a += s->area();
    return a;
}

int main()
{
    std::vector<geo::Shape *> v;
    v.reserve(3);
    for (int i = 0; i < 3; i++)
        v.push_back(new geo::Square(i));
    std::vector<int> w{1, 2, 3};
    std::printf("%g %d\n", sum_areas(v), total(w));
    for (auto *s : v)
        delete s;
    return 0;
}
