import torch
def relax(l,u,alpha=None):
    act=l>=0; unst=(l<0)&(u>0)
    den=torch.where(unst,u-l,torch.ones_like(u))
    su=torch.where(unst,u/den,act.double()); ub=torch.where(unst,-su*l,torch.zeros_like(u))
    sl=(act|(unst&(u>-l))).double()
    return sl,su,ub,unst
def backward(layers,m,A,bias,rel,xl,xu,alphas=None):
    # A: [B,S,n_m] over z_m ; z_m = W_{m-1} h_{m-1} + b_{m-1}
    for k in range(m-1,-1,-1):
        w,b=layers[k]
        bias=bias+A@b; A=A@w
        if k==0: break
        sl,su,ub,unst=rel[k-1]
        slx=sl.unsqueeze(1)
        if alphas is not None and alphas[k-1] is not None:
            slx=torch.where(unst.unsqueeze(1),alphas[k-1].clamp(0,1),slx)
        ap=A.clamp_min(0); an=A.clamp_max(0)
        bias=bias+(an*ub.unsqueeze(1)).sum(-1)
        A=ap*slx+an*su.unsqueeze(1)
    xc=((xl+xu)/2).unsqueeze(-1); xr=((xu-xl)/2).unsqueeze(-1)
    lb=bias+(A@xc).squeeze(-1)-(A.abs()@xr).squeeze(-1)
    return lb,A
def layer_bounds(layers,xl,xu):
    B=xl.shape[0]; rel=[]; bounds=[]
    for m in range(1,len(layers)):
        n=layers[m-1][0].shape[0]
        if m==1:
            w,b=layers[0]; c=(xl+xu)/2@w.T+b; r=(xu-xl)/2@w.abs().T; l,u=c-r,c+r
        else:
            eye=torch.eye(n,dtype=torch.float64)
            A=torch.cat([eye,-eye]).unsqueeze(0).expand(B,2*n,n)
            lb,_=backward(layers,m,A,torch.zeros(B,2*n,dtype=torch.float64),rel,xl,xu)
            l=lb[:,:n]; u=torch.max(-lb[:,n:],l)
            # intersect IBP
            w,b=layers[m-1]; pl,pu=bounds[-1]; hl,hu=pl.clamp_min(0),pu.clamp_min(0)
            wp,wn=w.clamp_min(0),w.clamp_max(0)
            il=hl@wp.T+hu@wn.T+b; iu=hu@wp.T+hl@wn.T+b
            l=torch.max(l,il); u=torch.max(torch.min(u,iu),l)
        bounds.append((l,u)); rel.append(relax(l,u))
    return bounds,rel
def final(layers,C,rhs,xl,xu,bounds,rel,alphas=None):
    B=xl.shape[0]
    A=C.unsqueeze(0).expand(B,*C.shape); bias=(-rhs).unsqueeze(0).expand(B,C.shape[0])
    return backward(layers,len(layers),A,bias,rel,xl,xu,alphas)
def conj_eg(lb,a,xl,xu,iters=30):
    best=lb.max(1).values; k=lb.shape[1]
    c=(xl+xu)/2; r=(xu-xl)/2
    d=lb-(a@c.unsqueeze(2)).squeeze(2)+(a.abs()@r.unsqueeze(2)).squeeze(2)
    lam=torch.full_like(lb,0.5/k).scatter_add_(1,lb.argmax(1,True),torch.full_like(best,0.5).unsqueeze(1))
    eta=2.0
    for t in range(iters):
        s=(lam.unsqueeze(1)@a).squeeze(1); x=torch.where(s>0,xl,xu)
        g=d+(a@x.unsqueeze(2)).squeeze(2); val=(lam*g).sum(1)/lam.sum(1)
        best=torch.max(best,val)
        gmax=g.max(1,True).values; span=gmax-g.min(1,True).values+1e-12
        lam=lam*torch.exp(eta*(g-gmax)/span); lam=lam/lam.sum(1,True); eta*=0.9
    return best,d
def conj_lp(lb,a,xl,xu):
    # exact: min_x max_k a_k x + d_k over box, via scipy linprog per box
    import numpy as np
    from scipy.optimize import linprog
    c=(xl+xu)/2; r=(xu-xl)/2
    d=lb-(a@c.unsqueeze(2)).squeeze(2)+(a.abs()@r.unsqueeze(2)).squeeze(2)
    out=[]
    for i in range(lb.shape[0]):
        K,n=a.shape[1],a.shape[2]
        # vars x (n), t ; min t s.t. a_k x + d_k - t <= 0
        A_ub=np.hstack([a[i].numpy(),-np.ones((K,1))]); b_ub=-d[i].numpy()
        bnds=[(float(xl[i,j]),float(xu[i,j])) for j in range(n)]+[(None,None)]
        res=linprog(np.r_[np.zeros(n),1.0],A_ub=A_ub,b_ub=b_ub,bounds=bnds,method='highs')
        out.append(res.fun)
    return torch.tensor(out,dtype=torch.float64)
def alpha_crown(layers,C,rhs,xl,xu,bounds,rel,iters=50,lr=0.1):
    B=xl.shape[0]; K=C.shape[0]
    alphas=[rel[j][0].unsqueeze(1).expand(B,K,-1).clone().requires_grad_(True) for j in range(len(rel))]
    opt=torch.optim.Adam(alphas,lr=lr)
    best=None; bestA=None
    for t in range(iters):
        lb,A=final(layers,C,rhs,xl,xu,bounds,rel,alphas)
        if best is None: best=lb.detach().clone(); bestA=A.detach().clone()
        else:
            imp=lb.detach()>best; best=torch.where(imp,lb.detach(),best); bestA=torch.where(imp.unsqueeze(-1),A.detach(),bestA)
        loss=-lb.sum(); opt.zero_grad(); loss.backward(); opt.step()
        with torch.no_grad():
            for a in alphas: a.clamp_(0,1)
    return best,bestA
